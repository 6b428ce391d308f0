import sys
from pathlib import Path

import pytest

# the runner tests' synthetic benchmark and well-behaved fake endpoint
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))

from tests.hostile.server import HostileServer


@pytest.fixture
def hostile():
    srv = HostileServer(drip_s=0.5).start()
    yield srv
    srv.stop()
