"""The run's real Kubernetes node (tests/support/node_session.py): one for every test process,
with ZooKeeper and Kafka on the host where its pods reach them."""

from __future__ import annotations

from pathlib import Path

import pytest
from node_session import NodeSession, session, shared_folder


@pytest.fixture(scope="session")
def node_session(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> NodeSession:
    is_worker = hasattr(request.config, "workerinput")
    return session(shared_folder(Path(tmp_path_factory.getbasetemp()), is_worker))
