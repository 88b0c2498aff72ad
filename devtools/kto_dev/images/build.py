"""The node's images as OCI archives, made once per content into the images cache.

`build_images(root)` builds the Dockerfile's operator and spark targets with buildah on the base
image's stand-in (`base`), tagged as the chart names them (`kafka-topic-operator:APPVERSION`,
`kafka-topic-operator-spark:APPVERSION`); `binary_image` (and `pause_image`, `coredns_image`)
makes an image of a static binary alone. Each archive carries its fully qualified name, so
`ctr -n k8s.io images import ARCHIVE` loads it under the name the kubelet asks for.

The archives are cached by content (the build context, the Dockerfile, the base recipe; or the
binaries): a second call with nothing changed hashes the context and returns, running no buildah.

`python -m kto_dev.images.build` builds the Dockerfile's images if missing and prints their paths.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kto_dev.images import base, cache, oci
from kto_dev.images.buildah import ImageBuildError, Storage, open_storage
from kto_dev.images.context import content_key

__all__ = ["Image", "ImageBuildError", "Images", "binary_image", "build_images"]

# The images' names as charts/kafka-topic-operator/values.yaml gives them.
OPERATOR_REPOSITORY = "kafka-topic-operator"
SPARK_REPOSITORY = "kafka-topic-operator-spark"
CHART = Path("charts/kafka-topic-operator/Chart.yaml")
# The build's own steps; a change here that changes the images needs a new value.
BUILD_RECIPE = "1"
# pause as Kubernetes' own image runs it (its Dockerfile's USER), CoreDNS as root: its official
# image grants the binary the capability to bind port 53 as a file capability, which a layer
# written here does not carry.
PAUSE_REFERENCE = "registry.k8s.io/pause:3.10"
PAUSE_USER = "65535:65535"
COREDNS_REFERENCE = "registry.k8s.io/coredns/coredns:v1.12.3"
# Several binaries' images live side by side (pause and CoreDNS, a few versions of each).
BINARY_IMAGES_KEPT = 6
# Where TLS trust lives on Debian, in the base image as on this machine.
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


@dataclass(frozen=True)
class Image:
    """An OCI archive and the reference it is imported under (`containerd_name` in full)."""

    archive: Path
    reference: str

    @property
    def containerd_name(self) -> str:
        return oci.containerd_name(self.reference)


@dataclass(frozen=True)
class Images:
    operator: Image
    spark: Image


def app_version(root: Path) -> str:
    """The chart's appVersion: the tag the chart's image names default to."""
    match = re.search(r'^appVersion:\s*"?([^"\s]+)"?\s*$', (root / CHART).read_text(), re.M)
    if match is None:
        raise ImageBuildError(f"{root / CHART}: no appVersion")
    return match.group(1)


def references(root: Path) -> dict[str, str]:
    version = app_version(root)
    return {
        "operator": f"{OPERATOR_REPOSITORY}:{version}",
        "spark": f"{SPARK_REPOSITORY}:{version}",
    }


def images_key(root: Path) -> str:
    extra = {"base": base.recipe_version(), "build": BUILD_RECIPE, **references(root)}
    return content_key(root, extra)


def _images_in(folder: Path, refs: Mapping[str, str]) -> Images:
    operator, spark = (Image(folder / f"{t}.tar", refs[t]) for t in ("operator", "spark"))
    return Images(operator, spark)


def build_command(root: Path, target: str, reference: str) -> list[str]:
    command = ["build", "--pull=never", "--layers", "--target", target, "--tag", reference,
               # The steps only download: the host's network leaves no bridge or firewall rules
               # behind to mix with the node's own.
               "--network=host"]  # fmt: skip
    if CA_BUNDLE.exists():
        # An egress that re-signs TLS (this machine's does) is trusted by the host's bundle
        # alone: the steps' pip reads it in place of the image's, mounted for each step only, so
        # nothing of it is left in the images. A host without the bundle has nothing to lend,
        # and naming a missing file would fail the build.
        command += ["--volume", f"{CA_BUNDLE}:{CA_BUNDLE}:ro"]
    return [*command, "--file", str(root / "Dockerfile"), str(root)]


def _build_targets(root: Path, refs: Mapping[str, str], out: Path) -> dict[str, object]:
    storage = open_storage(cache.cache_root() / "storage")
    made_base = base.ensure_base(storage)
    digests = {}
    for target in ("operator", "spark"):
        storage.buildah(*build_command(root, target, refs[target]), cwd=root,
                        what=f"building the Dockerfile's {target} target")  # fmt: skip
        digests[target] = _push(storage, refs[target], out / f"{target}.tar")
    _forget_builds(storage, refs.values())
    return {"images": dict(refs), "manifests": digests, "base": base.recipe_version(),
            "made_base": made_base, "storage_driver": storage.driver()}  # fmt: skip


def _push(storage: Storage, reference: str, archive: Path) -> str:
    # An OCI layout folder first, then the archive with both names in its index: buildah's own
    # archives name the image only by `org.opencontainers.image.ref.name`, which ctr does not
    # take as the image's full name.
    layout = archive.with_suffix(".layout")
    storage.buildah("push", "--quiet", reference, f"oci:{layout}",
                    what=f"writing {reference} as an OCI layout")  # fmt: skip
    try:
        return oci.write_layout_archive(layout, archive, reference)
    finally:
        shutil.rmtree(layout, ignore_errors=True)


def _forget_builds(storage: Storage, refs: Iterable[str]) -> None:
    """Drops the built images and their intermediate layers once archived: the storage keeps the
    base alone, not a gigabyte more for every change of the operator's code."""
    for reference in refs:
        storage.buildah("rmi", reference, what=f"removing {reference} from buildah's storage")
    try:
        storage.buildah("rmi", "--prune", what="removing intermediate images")
    except ImageBuildError as e:
        # A build killed midway leaves its working container holding layers; the archives are
        # written, so what is left only costs disk until a later prune succeeds.
        print(f"kto: {str(e).splitlines()[0]}; left for a later build", file=sys.stderr)


def build_images(root: Path) -> Images:
    """The operator and spark targets of `root`'s Dockerfile as OCI archives, built unless the
    cache has them for this content."""
    refs = references(root)
    folder = cache.cache_root() / "targets" / images_key(root)[:16]
    cache.make_once(folder, lambda out: _build_targets(root, refs, out))
    return _images_in(folder, refs)


def binary_image(reference: str, files: Mapping[str, Path], entrypoint: Sequence[str],
                 user: str | None = None) -> Image:  # fmt: skip
    """An image of `files` alone (path in the image -> file here), made unless the cache has one
    for the same files, contents and settings."""
    h = hashlib.sha256(repr((reference, sorted(files), list(entrypoint), user)).encode())
    for name in sorted(files):
        h.update(hashlib.sha256(files[name].read_bytes()).digest())
        h.update(b"x" if os.access(files[name], os.X_OK) else b"-")  # the layer keeps the bit
    folder = cache.cache_root() / "binaries" / h.hexdigest()[:16]
    archive_name = re.sub(r"[^A-Za-z0-9.-]+", "_", reference) + ".tar"

    def make(out: Path) -> dict[str, object]:
        digest = oci.write_binary_image(out / archive_name, reference, files, entrypoint, user)
        return {"image": reference, "manifest": digest}

    cache.make_once(folder, make, keep=BINARY_IMAGES_KEPT)
    return Image(folder / archive_name, reference)


def pause_image(binary: Path, reference: str = PAUSE_REFERENCE) -> Image:
    """The pod sandbox's image: the static pause binary as /pause."""
    return binary_image(reference, {"pause": binary}, ["/pause"], PAUSE_USER)


def coredns_image(binary: Path, reference: str = COREDNS_REFERENCE) -> Image:
    """CoreDNS's image: its static binary as /coredns."""
    return binary_image(reference, {"coredns": binary}, ["/coredns"])


def main() -> int:
    root = Path.cwd()
    try:
        if not (root / "Dockerfile").exists():
            raise ImageBuildError(f"{root}: no Dockerfile; run this from the repository's root")
        images = build_images(root)
    except ImageBuildError as e:
        print(f"kto: {e}", file=sys.stderr)
        return 1
    for image in (images.operator, images.spark):
        print(f"{image.archive} {image.containerd_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
