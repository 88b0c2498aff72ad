"""A real one-node Kubernetes cluster on this machine; `build` makes its binaries, once."""
