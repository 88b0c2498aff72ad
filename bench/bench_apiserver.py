"""Benchmark: the project's Kubernetes API emulator against kmock's KubernetesEmulator (anchor).

Each server runs in its own process; one aiohttp client (16 requests in flight) creates N custom
resources, merge-patches each one's status subresource, then deletes them all. Prints one line.
kmock scans every object on every request, so it runs a smaller N (and a time budget) to keep
the whole benchmark under a minute; the emulator runs that same N too, for a like-for-like ratio.
kmock is installed on demand into .kto/kmock-lib (git-ignored) rather than into the project's
environment, because its pytest plugin would load into the test suite.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
KMOCK_LIB = ROOT / ".kto" / "kmock-lib"
N = 2000
N_ANCHOR = 100
CONCURRENCY = 16
ANCHOR_BUDGET_S = 25.0
TOPICS = "/apis/kto.dev/v1/namespaces/default/kafkatopics"

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kafkatopics.kto.dev"},
    "spec": {
        "group": "kto.dev",
        "scope": "Namespaced",
        "names": {"plural": "kafkatopics", "singular": "kafkatopic", "kind": "KafkaTopic"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["partitions"],
                                "properties": {
                                    "partitions": {
                                        "type": "integer",
                                        "minimum": 1,
                                        "x-kubernetes-validations": [
                                            {"rule": "self >= oldSelf", "message": "no shrink"}
                                        ],
                                    },
                                    "replicas": {"type": "integer", "default": 3},
                                    "config": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}

KMOCK_SERVER = """
import asyncio, kmock
async def main():
    async with kmock.KubernetesEmulator() as k, kmock.Server(k) as srv:
        k.resources['kto.dev/v1/kafkatopics'] = kmock.ResourceInfo(
            namespaced=True, kind='KafkaTopic', singular='kafkatopic',
            verbs={'get', 'list', 'create', 'patch', 'delete', 'watch'}, subresources={'status'})
        print('listening on', srv.url, flush=True)
        await asyncio.Event().wait()
asyncio.run(main())
"""


def topic(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": f"topic-{i:05d}", "namespace": "default"},
        "spec": {"partitions": 12, "config": {"retention.ms": "604800000"}},
    }


async def _phase(
    session: aiohttp.ClientSession, requests: list[tuple[str, str, Any, str]], deadline: float
) -> tuple[float, int]:
    """Run requests with bounded concurrency; returns (seconds, requests done before deadline)."""
    limit = asyncio.Semaphore(CONCURRENCY)
    done = 0

    async def one(method: str, url: str, body: Any, ctype: str) -> None:
        nonlocal done
        async with limit:
            if time.monotonic() > deadline:
                return
            async with session.request(
                method, url, json=body, headers={"Content-Type": ctype}
            ) as resp:
                await resp.read()
                if resp.status >= 300:
                    raise RuntimeError(f"{method} {url}: {resp.status}")
                done += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(*r) for r in requests))
    return time.perf_counter() - start, done


async def run_phases(url: str, n: int, *, with_crd: bool, budget: float) -> dict[str, float]:
    deadline = time.monotonic() + budget
    async with aiohttp.ClientSession(url) as session:
        if with_crd:
            async with session.post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD
            ) as resp:
                if resp.status not in (201, 409):
                    raise RuntimeError(f"CRD: {resp.status} {await resp.text()}")
        json_type = "application/json"
        merge = "application/merge-patch+json"
        create = [("POST", TOPICS, topic(i), json_type) for i in range(n)]
        status = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        patch = [("PATCH", f"{TOPICS}/topic-{i:05d}/status", status, merge) for i in range(n)]
        delete = [("DELETE", f"{TOPICS}/topic-{i:05d}", None, json_type) for i in range(n)]
        timings: dict[str, float] = {}
        for name, requests in (("create", create), ("patch", patch), ("delete", delete)):
            seconds, done = await _phase(session, requests, deadline)
            timings[name] = seconds
            timings[f"{name}_done"] = done
    return timings


def start_server(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, match.group(1)


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def ensure_kmock() -> str:
    """Install kmock 0.8 into .kto/kmock-lib once; '' when ready, else why not."""
    if (KMOCK_LIB / "kmock").exists():
        return ""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--target",
            str(KMOCK_LIB),
            "kmock==0.8",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if result.returncode == 0 else "pip could not install kmock 0.8"


def _rate(timings: dict[str, float]) -> float:
    ops = timings["create_done"] + timings["patch_done"] + timings["delete_done"]
    return ops / (timings["create"] + timings["patch"] + timings["delete"])


def _describe(t: dict[str, float]) -> str:
    total = t["create"] + t["patch"] + t["delete"]
    return (
        f"create {t['create']:.2f} s, patch status {t['patch']:.2f} s, "
        f"delete {t['delete']:.2f} s (total {total:.2f} s, {_rate(t):.0f} req/s)"
    )


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    proc, url = start_server([sys.executable, "-m", "kube_api_emulator", "--port", "0"], env)
    try:
        ours = asyncio.run(run_phases(url, N, with_crd=True, budget=120))
        ours_small = asyncio.run(run_phases(url, N_ANCHOR, with_crd=False, budget=120))
    finally:
        stop_server(proc)
    line = f"apiserver emulator, {N} CRs via HTTP: {_describe(ours)}"
    why_not = ensure_kmock()
    if why_not:
        print(f"{line}; anchor kmock KubernetesEmulator not run: {why_not}")
        return
    kenv = {**os.environ, "PYTHONPATH": str(KMOCK_LIB)}
    kproc, kurl = start_server([sys.executable, "-c", KMOCK_SERVER], kenv)
    try:
        anchor = asyncio.run(run_phases(kurl, N_ANCHOR, with_crd=False, budget=ANCHOR_BUDGET_S))
    finally:
        stop_server(kproc)
    finished = all(anchor[f"{p}_done"] == N_ANCHOR for p in ("create", "patch", "delete"))
    note = "" if finished else f" (stopped at the {ANCHOR_BUDGET_S:.0f} s budget)"
    ratio = _rate(ours_small) / _rate(anchor)
    print(
        f"{line}; anchor kmock 0.8 KubernetesEmulator, {N_ANCHOR} CRs: {_describe(anchor)}"
        f"{note} vs emulator {_describe(ours_small)}: {ratio:.0f}x the anchor's rate"
    )


if __name__ == "__main__":
    main()
