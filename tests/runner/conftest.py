import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_helpers import bench, server  # noqa: F401  (fixtures)

from scoring.runner.agents import start_server


@pytest.fixture(scope="module")
def chance():
    """The chance agent served in this process on a free loopback port."""
    srv, _ = start_server("chance")
    yield srv
    srv.shutdown()
    srv.server_close()
