"""One writer per output directory: an exclusive flock held while a command writes it."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path
from typing import Any

from scoring.errors import OutputError
from scoring.support.files import refuse_non_regular

LOCK = ".spatialgap.lock"  # flock'ed by the one process writing the directory


class RunDirLockedError(OutputError):
    """Another process is writing the run directory."""


class RunDirLock:
    """An exclusive flock on ``<dir>/LOCK`` (or ``path``) held while a command writes the
    directory (released by ``release`` or when the process ends, however it ends). The file
    holds the owner's pid. With ``remove`` the holder deletes the file on release (a lock beside
    the directory leaves nothing behind); a second process then checks that the file it locked
    is still the one at ``path``, or opens it again."""

    def __init__(self, run_dir: Path, who: str = "run", path: Path | None = None, remove: bool = False):
        self.path = Path(run_dir) / LOCK if path is None else path
        self._remove = remove
        self._fd: int | None = None
        for _ in range(5):  # the file removed by its last holder between our open and our lock
            fd = self._lock(run_dir, who)
            try:
                current = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                self._fd = fd
                break
            os.close(fd)
        else:
            raise OutputError(f"{self.path}: the lock file keeps changing; try again")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{os.getpid()}\n".encode("ascii"), 0)

    def _lock(self, run_dir: Path, who: str) -> int:
        """A descriptor of the lock file, flock'ed; RunDirLockedError when another holds it."""
        refuse_non_regular(self.path, "lock file")
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot create the lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputError(f"{self.path}: cannot lock ({exc.strerror})") from None
            raise RunDirLockedError(
                f"{run_dir}: another {who} (pid {holder}) is writing this directory; "
                "wait for it to end or give another --out"
            ) from None
        return fd

    def release(self) -> None:
        """Drop the lock (closing the descriptor drops the flock)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            if self._remove:
                with contextlib.suppress(OSError):  # still held: no one else holds this file
                    self.path.unlink()
            os.close(fd)

    def __enter__(self) -> RunDirLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def lock_output(out: Path, who: str, *, beside: bool = False) -> RunDirLock:
    """Lock the output directory ``out`` for this command: a second command writing it gets a
    one-line error naming the first one's pid, and nothing is half-written by two at once. The
    lock file is ``out/.spatialgap.lock``, or with ``beside`` ``.NAME.spatialgap.lock`` next to
    ``out`` (for a command that replaces the whole directory)."""
    out = Path(out)
    where = out.parent if beside else out
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{where}: cannot create output directory ({exc.strerror})") from None
    if beside:
        return RunDirLock(out, who, out.parent / f".{out.name}{LOCK}", remove=True)
    return RunDirLock(out, who)
