"""`spatialgap serve-agent` (a real subprocess) against hostile clients: a body announced over the
limit is refused (413) before a byte of it is read or allocated, a body nested 100,000 deep is a
400, and the server serves on afterwards."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys

import pytest

from scoring.runner.agents.server import MAX_BODY
from tests.conftest import REPO

BOUND_S = 60  # a bound on each reply, never a measure of speed


@pytest.fixture
def served():
    proc = subprocess.Popen(
        [sys.executable, "-m", "scoring", "serve-agent", "--agent", "chance", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=str(REPO),
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"on http://127\.0\.0\.1:(\d+)/v1", line)
        assert m, line
        yield proc, int(m.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=BOUND_S)


def _rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _status_of(sock: socket.socket) -> int:
    sock.settimeout(BOUND_S)
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "closed without a reply"
        data += chunk
    return int(data.split(b" ", 2)[1])


def _post_head(port: int, length: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
    sock.sendall(head.encode("ascii"))
    return sock


def test_announced_bodies_over_the_limit_are_refused_before_reading(served):
    """Four connections announcing 256 MiB and sending nothing: each gets 413 at once (it used to
    allocate the 256 MiB and wait for them), and the server's memory does not grow by them."""
    proc, port = served
    before = _rss_kib(proc.pid)
    socks = [_post_head(port, 256 << 20) for _ in range(4)]
    try:
        assert [_status_of(s) for s in socks] == [413] * 4
    finally:
        for s in socks:
            s.close()
    assert _rss_kib(proc.pid) - before < 64 * 1024  # KiB: far below one announced body
    assert MAX_BODY < 256 << 20


def test_a_large_announced_body_costs_only_what_arrives(served):
    """Under the limit but far above what is sent: the buffer grows with the bytes that arrive
    (the server answers the short body's 400 when the client hangs up its side)."""
    proc, port = served
    before = _rss_kib(proc.pid)
    socks = [_post_head(port, MAX_BODY - 1) for _ in range(4)]
    try:
        for s in socks:
            s.sendall(b'{"model"')
            s.shutdown(socket.SHUT_WR)
        assert [_status_of(s) for s in socks] == [400] * 4
    finally:
        for s in socks:
            s.close()
    assert _rss_kib(proc.pid) - before < 64 * 1024


def test_a_body_nested_100000_deep_is_a_400_and_the_server_serves_on(served):
    _, port = served
    body = b"[" * 100_000 + b"]" * 100_000
    sock = _post_head(port, len(body))
    try:
        sock.sendall(body)
        assert _status_of(sock) == 400
    finally:
        sock.close()
    sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
    try:
        msg = json.dumps({"messages": [{"role": "user", "content": "Which? A) x B) y"}]}).encode()
        head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(msg)}\r\n\r\n"
        sock.sendall(head.encode("ascii") + msg)
        assert _status_of(sock) == 200
    finally:
        sock.close()
