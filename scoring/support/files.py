"""Reading and writing the project's files: JSON, JSON Lines, and atomic replacement.

Every file a stage writes goes through :func:`write_atomic`, so a reader never sees half a file and a
killed process never leaves one behind. Every read failure is an :class:`InputError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scoring.errors import InputError, OutputError


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line; InputError naming the line on bad JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield n, json.loads(line)
                except ValueError as exc:
                    raise InputError(f"{path}:{n}: invalid JSON ({getattr(exc, 'msg', exc)})") from None
                except RecursionError:
                    raise InputError(f"{path}:{n}: JSON nested too deeply to read") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file's value; InputError naming the file when it is unreadable or not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError:
        raise InputError(f"{path}: not valid JSON") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read") from None


def dumps_safe(value: Any, **kw: Any) -> str:
    """``json.dumps`` whose text always encodes as UTF-8: a string from outside may hold an
    unpaired surrogate (``"\\ud800"`` is valid JSON), which UTF-8 cannot carry; the value is then
    written with ASCII escapes (the same JSON value). Other values keep their usual bytes."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, **kw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, **kw)
    return text


def json_line(value: Any) -> bytes:
    """One compact JSON Lines record (newline included), always encodable (see dumps_safe)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return (text + "\n").encode("utf-8")  # encoded once: this is the journal's hot path
    except UnicodeEncodeError:
        return (json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")) + "\n").encode()


def refuse_non_regular(path: Path, what: str = "journal") -> None:
    """OutputError unless ``path`` is absent or a regular file (not a symlink, FIFO, device):
    a journal is a file the run created, never one a link points it to."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise OutputError(f"{path}: the {what} is {kind}; a {what} must be a regular file this tool created")


def open_append(path: Path, what: str = "journal") -> Any:
    """``path`` opened for binary appending, refusing a symlink (O_NOFOLLOW, so no race between
    the check and the open) and anything but a regular file."""
    refuse_non_regular(path, what)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the {what} ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OutputError(f"{path}: the {what} is not a regular file")
    return os.fdopen(fd, "ab")


def canonical_json(value: Any) -> str:
    """Key-sorted, compact JSON: the same value always gives the same text (used for hashes).

    Not ASCII-escaped: run journals key every request by a hash of this text, so changing it
    would make every recorded run look new."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _umask() -> int:
    # Read without a race: /proc is authoritative on Linux; elsewhere fall back to a common default.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def write_atomic(path: str | os.PathLike, data: bytes | str, *, mode: int | None = None) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``.

    The file gets ``mode`` (default: 0o666 less the umask, as an ordinary file would; mkstemp alone
    would leave 0o600, which hides results from the rest of a team). OutputError names the path.
    """
    write_set(Path(path).parent, {Path(path).name: data}, mode=mode)


def write_set(
    directory: str | os.PathLike, parts: dict[str, bytes | str], *, mode: int | None = None
) -> None:
    """Write the files ``parts`` (name -> data) into ``directory`` as one unit: every part to a
    temporary file beside its target and fsynced first, and only then each renamed over its
    target. A failed write (disk full) leaves the previous set whole and no temporary file;
    readers check that the parts belong together (a hash of one recorded in another), which also
    catches a process killed between the renames. OutputError names the file."""
    directory = Path(directory)
    aside: list[tuple[str, Path]] = []
    path = directory
    try:
        for name, data in parts.items():
            path = directory / name
            aside.append((_write_aside(path, data, mode), path))
        for tmp, path in aside:
            os.replace(tmp, path)
    except OSError as exc:  # disk full, quota: the old files stay whole, the error names the file
        for tmp, _ in aside:
            Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        for tmp, _ in aside:
            Path(tmp).unlink(missing_ok=True)
        raise


def _write_aside(path: Path, data: bytes | str, mode: int | None) -> str:
    """``data`` in a new temporary file beside ``path``, fsynced, with its final mode; its name."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_json_atomic(path: str | os.PathLike, value: Any, *, indent: int | None = 2) -> None:
    """``value`` as UTF-8 JSON (NaN refused) with a final newline, written atomically."""
    write_atomic(path, dumps_safe(value, indent=indent) + "\n")
