"""The run's real Kubernetes node (tests/support/node_session.py): one for every test process,
with ZooKeeper and Kafka on the host where its pods reach them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from node_session import NodeSession, session, shared_folder

from kto_dev.node import chart

from .helpers import Release, install


@pytest.fixture(scope="session")
def node_session(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> NodeSession:
    is_worker = hasattr(request.config, "workerinput")
    return session(shared_folder(Path(tmp_path_factory.getbasetemp()), is_worker))


@pytest.fixture
def chart_release(node_session: NodeSession) -> Iterator[Callable[..., Release]]:
    """`chart_release(prefix, **values)` installs the chart in a new namespace it alone
    watches (helpers.install); every release is uninstalled after the test."""
    installed: list[Release] = []

    def make(prefix: str, **values: Any) -> Release:
        release = install(node_session, prefix, **values)
        installed.append(release)
        return release

    yield make
    for release in installed:
        chart.uninstall(release.node, release.name, release.namespace)
        release.node.kubectl("delete", "namespace", release.namespace, "--wait=false")
