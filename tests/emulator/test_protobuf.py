"""Kubernetes protobuf bodies (as typed clients send them) decode to the JSON objects."""

from __future__ import annotations

import pytest

from kube_api_emulator.protobuf import MAGIC, ProtobufError, decode


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: bytes | str) -> bytes:
    return field(number, field(1, key) + field(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = field(1, api_version) + field(2, kind)
    return (
        MAGIC
        + field(1, type_meta)
        + field(2, raw)
        + field(4, "application/vnd.kubernetes.protobuf")
    )


def test_secret_with_metadata_labels_and_binary_data() -> None:
    meta = (
        field(1, "sh.helm.release.v1.demo.v1")
        + field(2, "")
        + field(3, "kto")
        + entry(11, "owner", "helm")
        + entry(11, "status", "deployed")
        + field(7, 0)
        + field(8, b"")
    )
    raw = field(1, meta) + entry(2, "release", b"\x00\x01binary") + field(3, "helm.sh/release.v1")
    assert decode(envelope("v1", "Secret", raw)) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sh.helm.release.v1.demo.v1",
            "namespace": "kto",
            "labels": {"owner": "helm", "status": "deployed"},
        },
        "data": {"release": "AAFiaW5hcnk="},
        "type": "helm.sh/release.v1",
    }


def test_config_map_namespace_and_owner_references() -> None:
    owner = field(1, "KafkaTopic") + field(3, "t") + field(4, "u-1") + field(5, "kto.dev/v1")
    owner += field(6, 1)
    meta = field(1, "c") + field(13, owner) + field(14, "a/b") + field(14, "c/d")
    raw = field(1, meta) + entry(2, "k", "v") + field(4, 1)
    assert decode(envelope("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "c",
            "ownerReferences": [
                {
                    "kind": "KafkaTopic",
                    "name": "t",
                    "uid": "u-1",
                    "apiVersion": "kto.dev/v1",
                    "controller": True,
                }
            ],
            "finalizers": ["a/b", "c/d"],
        },
        "data": {"k": "v"},
        "immutable": True,
    }
    namespace = field(1, field(1, "team")) + field(2, field(1, "kubernetes"))
    assert decode(envelope("v1", "Namespace", namespace))["spec"] == {"finalizers": ["kubernetes"]}


def test_delete_options() -> None:
    raw = field(2, field(1, "uid-1")) + field(4, "Foreground") + field(5, "All")
    assert decode(envelope("meta.k8s.io/v1", "DeleteOptions", raw)) == {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "uid-1"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


@pytest.mark.parametrize(
    "body",
    [
        b'{"kind": "Secret"}',
        envelope("apps/v1", "Deployment", b""),
        MAGIC + b"\x0a\xff",
    ],
)
def test_unsupported_or_malformed_bodies(body: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode(body)
