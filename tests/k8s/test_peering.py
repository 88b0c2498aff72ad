"""Two `kto run` replicas in one kopf peering, as the chart runs them: one handles events, the other
stands by and takes over when the first stops."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kto_testing import eventually

from kube_api_emulator import ApiServer

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"
HANDLED = "Handler 'reconcile' succeeded"  # kopf's log line for a KafkaTopic handled


def test_two_replicas_keep_one_active_and_the_other_takes_over(
    zk_chroot: str, tmp_path: Path, dev_brokers: None
) -> None:
    from kubernetes import client, config

    with ApiServer() as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        config.load_kube_config(str(kubeconfig))
        for crd in sorted((ROOT / "crds").glob("*.yaml")):
            client.ApiextensionsV1Api().create_custom_resource_definition(
                yaml.safe_load(crd.read_text())
            )
        custom = client.CustomObjectsApi()
        custom.create_cluster_custom_object("kopf.dev", "v1", "clusterkopfpeerings",
                                            {"apiVersion": "kopf.dev/v1",
                                             "kind": "ClusterKopfPeering",
                                             "metadata": {"name": "kto"}})  # fmt: skip

        def start(name: str) -> tuple[subprocess.Popen[bytes], Path]:
            log = tmp_path / f"{name}.log"
            with log.open("w") as out:
                process = subprocess.Popen(
                    [sys.executable, "-m", "kafka_topic_operator.cli", "run", "--zookeeper",
                     zk_chroot, "--embedded-controller", "--peering", "kto", "--liveness", "",
                     "--metrics-port", "0", "--session-timeout", "6"],
                    stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
                    env={**os.environ, "KUBECONFIG": str(kubeconfig)},
                )  # fmt: skip
            return process, log

        def apply(name: str) -> None:
            body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                    "metadata": {"name": name},
                    "spec": {"partitions": 2, "replicas": 2}}  # fmt: skip
            custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)

        def ready(name: str) -> bool:
            obj = custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
            conditions = (obj.get("status") or {}).get("conditions") or []
            return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

        def priority(log: Path) -> int | None:
            found = re.search(r"peering kto with priority (\d+)", log.read_text())
            return int(found.group(1)) if found else None

        replicas = [start("first"), start("second")]
        try:
            eventually(lambda: all(priority(log) for _, log in replicas), "both started")
            peering = lambda: custom.get_cluster_custom_object(  # noqa: E731
                "kopf.dev", "v1", "clusterkopfpeerings", "kto"
            )
            eventually(lambda: len(peering().get("status") or {}) == 2,
                       "both replicas in the peering", timeout=60)  # fmt: skip
            apply("before")
            eventually(lambda: ready("before"), "a topic Ready with one replica active", 60)
            # The highest priority handles events; the other stands by (kopf pauses it).
            replicas.sort(key=lambda replica: priority(replica[1]) or 0, reverse=True)
            (active, active_log), (_, standby_log) = replicas
            assert HANDLED in active_log.read_text()
            assert HANDLED not in standby_log.read_text()
            active.terminate()
            active.wait(30)
            apply("after")
            eventually(lambda: ready("after"), "a topic Ready after the takeover", 90)
            assert HANDLED in standby_log.read_text()
        finally:
            for process, log in replicas:
                process.terminate()
                process.wait(30)
                print(log.read_text()[-5000:])
