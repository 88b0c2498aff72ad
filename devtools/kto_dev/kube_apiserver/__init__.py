"""A real Kubernetes API server for the tests and the dev cluster: kube-apiserver and etcd built
with Go from their own modules (`build`), started on loopback with generated credentials
(`launcher`)."""
