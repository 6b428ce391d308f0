"""Process settings of the commands: freed large buffers kept (no page faults to get them back), one
BLAS thread (the parallelism is processes)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import resource, sys
if sys.argv[1] == "keep":
    from scoring.support.process import keep_freed_memory
    keep_freed_memory()
import numpy as np
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(60):
    a = np.ones(1536 * 1536 * 3 + i * 4096, dtype=np.uint8)  # a map's pixels, its size varying
    del a
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_freed_map_buffers_are_reused_without_page_faults():
    default, kept = _faults("default"), _faults("keep")
    # by default each 7 MB buffer is mapped afresh (hundreds of page faults each time, how many
    # depends on the kernel's huge pages and the load); kept, it is reused: far fewer faults, and
    # at most a handful per buffer
    assert kept < max(default / 5, 60 * 20), (default, kept)


THREADS_PROBE = """
import os, sys
if sys.argv[1] == "command":
    from scoring.cli import main
    try:
        main(["--version"])  # what every `spatialgap` command does first
    except SystemExit:
        pass
import numpy as np
np.ones((64, 64)) @ np.ones((64, 64))  # a BLAS call: its thread pool is up
status = open("/proc/self/status").read()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))
"""


def _threads(mode: str, **env: str) -> int:
    environ = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", THREADS_PROBE, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**environ, **env},
    )
    return int(out.stdout.split()[-1])  # after the version line


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to count threads")
def test_a_command_runs_numpy_with_one_blas_thread_unless_told_otherwise():
    # parallelism comes from processes: BLAS helper threads only spin (measured: 2 CPU-s of 4 in
    # the main job's scoring and report)
    assert _threads("command") == 1
    if (os.cpu_count() or 1) > 1:  # the probe sees BLAS threads where there are cores for them
        assert _threads("plain") > 1
        assert _threads("command", OPENBLAS_NUM_THREADS="2") > 1  # the user's choice stands


def _collections(tuned: bool) -> int:
    """Collections (of any generation) while a process keeps a record per request."""
    import gc

    from scoring.support.process import fewer_collections

    before = gc.get_threshold()
    done: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "stop":
            done.append(info["generation"])

    held = [[i] for i in range(200_000)]  # a benchmark's worth of long-lived containers
    journal = []
    try:
        gc.collect()
        if tuned:
            fewer_collections()
        else:  # CPython's defaults (an earlier test may have run a command in this process)
            gc.set_threshold(700, 10, 10)
        gc.callbacks.append(count)
        for i in range(80_000):  # a sweep's requests: each leaves a record of a few containers
            journal.append({"key": str(i), "reply": {"choices": [{"message": {"content": "A"}}]}})
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*before)
    del held, journal
    return len(done)


def test_fewer_collections_runs_the_collector_far_less_often():
    # each collection walks the young objects; a full one (how often depends on what else the
    # process holds) walks everything
    default, tuned = _collections(False), _collections(True)
    assert tuned * 5 < default, (default, tuned)


EXIT_PROBE = """
import atexit, sys
from pathlib import Path
import scoring.cli
marker = Path(sys.argv[1])
atexit.register(lambda: marker.write_text("exit handlers ran"))
sys.argv = ["spatialgap", *sys.argv[2:]]
scoring.cli.run()
print("not reached: run() ends the process")
"""


@pytest.mark.parametrize(
    ("argv", "code", "stream", "expected"),
    [
        (["--version"], 0, "stdout", "spatialgap "),  # argparse's own exit
        (["selfcheck"], 0, "stdout", "selfcheck passed"),  # main() returns: the fast exit
        (["report", "--results", "/nonexistent", "--out", "/nonexistent/r.html"], 2, "stderr", "error:"),
    ],
)
def test_the_command_exits_with_its_code_its_output_whole_and_its_exit_handlers_run(
    tmp_path, argv, code, stream, expected
):
    marker = tmp_path / "atexit"
    out = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, str(marker), *argv], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == code, out.stderr[-500:]
    assert expected in getattr(out, stream)  # piped output is flushed before the process ends
    assert "not reached" not in out.stdout
    assert marker.read_text() == "exit handlers ran"


@pytest.mark.parametrize("quiet", [False, True])
def test_the_resource_tracker_writes_nothing_below_the_commands_last_line_once_quieted(quiet):
    # a semaphore left behind (as an interrupted pool can leave one): the tracker still cleans it
    # up at the end, but only the loud tracker says so on the command's stderr
    leak = "import multiprocessing as mp, os; lock = mp.get_context('spawn').Lock(); os._exit(0)"
    pre = "from scoring.support.process import quiet_resource_tracker; quiet_resource_tracker(); "
    r = subprocess.run(
        [sys.executable, "-c", (pre if quiet else "") + leak], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0
    assert ("leaked semaphore" in r.stderr) is not quiet, r.stderr
