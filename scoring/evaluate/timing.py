"""CPU seconds of the sweep's phases and of the processes it starts, for evaluate.json's
`cpu_seconds` (what `make bench` prints): on a shared 2-core machine the wall time says little
without what each part cost."""

from __future__ import annotations

import os
import resource
import subprocess


def own_cpu() -> float:
    """CPU seconds of this process so far (every thread)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def reaped_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for (with theirs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def all_cpu() -> float:
    """Both of the above."""
    return own_cpu() + reaped_cpu()


def wait_with_cpu(proc: subprocess.Popen) -> float | None:
    """Wait for ``proc`` to end and return the CPU seconds it and its waited-for children used
    (os.wait4); None where that is not available (the process is then waited for as usual)."""
    if proc.returncode is None and hasattr(os, "wait4"):
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:  # already reaped elsewhere
            proc.wait()
            return None
        proc.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_utime + usage.ru_stime
    proc.wait()
    return None


def live_cpu(pid: int) -> float | None:
    """CPU seconds a running child has used so far, with its waited-for children (/proc on Linux;
    None elsewhere or once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the name: state is field 3; utime, stime, cutime, cstime are fields 14-17
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")
