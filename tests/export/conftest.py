import pytest

from scoring.build.builder import build_benchmark
from scoring.render.batch import render_benchmark


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory):
    """Four relations (one per family), 2 QA + 1 edit each, maps rendered: built once (~5 s)."""
    out = tmp_path_factory.mktemp("export") / "helsinki"
    build_benchmark(None, out, seed=0, n_qa=2, n_edit=1, relations=["M01", "D04", "T11", "O03"], jobs=1,
                    progress=False)  # fmt: skip
    render_benchmark(out, jobs=1, progress=False)
    return out


@pytest.fixture(scope="session")
def scored(small_bench, tmp_path_factory):
    """Runs of the `tools` and `chance` agents served over loopback (QA and edits, geojson and image),
    scored: (runs, results directory)."""
    from scoring.runner.agents import start_server
    from scoring.runner.config import ModelSpec
    from scoring.runner.run import run_benchmark
    from scoring.score.results import score_runs

    root = tmp_path_factory.mktemp("scored")
    runs = []
    for agent in ("tools", "chance"):
        srv, _ = start_server(agent)
        try:
            spec = ModelSpec.from_endpoint(srv.base_url, agent, timeout_s=30)
            for modality, task in (
                ("geojson", "qa"),
                ("geojson", "edit"),
                ("image", "edit"),
                ("image", "qa"),
            ):
                out = root / "runs" / agent / f"{modality}-{task}"
                run_benchmark(small_bench, spec, modality, task, None, out, progress=False)
                runs.append(out)
        finally:
            srv.shutdown()
            srv.server_close()
    score_runs(small_bench, runs, root / "results", selfcheck=True)
    return runs, root / "results"
