"""The Kubeflow Spark operator, for the end-to-end test of the `sparkApplication` engine: built
with Go from its own module (`build`), its CRDs installed and its controller and webhook run as
host processes against a kube-apiserver (`launcher`)."""
