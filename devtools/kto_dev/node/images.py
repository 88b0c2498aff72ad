"""Every image a node here runs, made here (no registry can be pulled from): the sandbox (pause)
and CoreDNS images from the node's own binaries, and the project's operator and spark images
from its Dockerfile."""

from __future__ import annotations

from pathlib import Path

from kto_dev.images.build import build_images, coredns_image, pause_image

from .build import require_binaries
from .launcher import NodeImages

ROOT = Path(__file__).resolve().parents[3]


def node_images(root: Path = ROOT, *, project: bool = True) -> NodeImages:
    """The images, built unless cached (`project`: the Dockerfile's two targets too)."""
    binaries = require_binaries()
    pause, coredns = pause_image(binaries.pause), coredns_image(binaries.coredns)
    archives = [pause.archive, coredns.archive]
    if project:
        built = build_images(root)
        archives += [built.operator.archive, built.spark.archive]
    return NodeImages(pause.containerd_name, coredns.containerd_name, tuple(archives))
