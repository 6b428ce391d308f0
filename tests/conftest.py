import os
from pathlib import Path

import pytest


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under tests/, collect only test modules: --doctest-modules (for scoring/) would otherwise
    import every helper and benchmark script as a module of its own."""
    if collection_path.suffix == ".py" and not collection_path.name.startswith(("test_", "conftest")):
        return True
    return None


REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
VENV_BIN = REPO / ".venv" / "bin"

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with the reason when it is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"../shared/data/{'/'.join(parts)} is absent (development data, not in a user's clone)")
    return p


@pytest.fixture(scope="session")
def helsinki_bench(tmp_path_factory):
    """The full default benchmark (embedded Helsinki, 25 per relation per task), built once."""
    from scoring.build.builder import build_benchmark

    out = tmp_path_factory.mktemp("bench") / "helsinki"
    build_benchmark(None, out, seed=0, jobs=2, progress=False)
    return out


@pytest.fixture(scope="module")
def chance():
    """The chance agent served in this process on a free loopback port (every folder's tests)."""
    from scoring.runner.agents import start_server  # on use: the plugin's installed-only run has no aiohttp

    srv, _ = start_server("chance")
    yield srv
    srv.shutdown()
    srv.server_close()
