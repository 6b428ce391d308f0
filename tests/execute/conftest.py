import pytest

from tests.execute.cluster import DaskCluster


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory):
    """A scheduler and two workers on 127.0.0.1, shared by the tests that leave it whole (the
    kill test starts its own)."""
    c = DaskCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield c
    finally:
        c.close()
