"""The container images of a real one-node cluster, made on this machine without a Docker engine.

`build` makes the Dockerfile's two targets (the operator and the rebalance planner's Spark image)
with buildah, on a stand-in for the Dockerfile's Python base image that `base` makes from Debian's
packages with mmdebstrap, and the single-binary images (the pod sandbox's pause, CoreDNS) with
`oci`. Every image ends as an OCI image archive that `ctr images import` loads under the name it
carries, and every archive is cached by the content it was made from.
"""
