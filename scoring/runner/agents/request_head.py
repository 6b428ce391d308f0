"""Reading a request's head (request line and headers) without the email parser.

http.server parses the header block of every request with the email package's feed parser,
which cost a served agent as much as answering a GeoJSON request. A plain HTTP/1.x request
(ASCII request line, one ``Name: value`` per header line) is read here with the stdlib's own
limits and messages, into the same HTTPMessage; anything else is left to the stdlib."""

from __future__ import annotations

import email.parser
import http.client
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler

_MAXLINE, _MAXHEADERS = 65536, 100  # http.client's limits
# A header line the email parser reads as `name` and `value` (its header-name characters; the
# value's leading blanks dropped, its line end too) and that no continuation line can follow
# unnoticed (checked on the next line).
_SIMPLE = re.compile(rb"([!-9;-~]+):[ \t]*([^\r\n]*)\r?\n")
_VERSIONS = {b"HTTP/1.1": "HTTP/1.1", b"HTTP/1.0": "HTTP/1.0"}


class FastHeadMixin(BaseHTTPRequestHandler):
    """parse_request for the common case; the stdlib's for every other."""

    raw_requestline: bytes  # set by handle_one_request before parse_request

    def parse_request(self) -> bool:
        raw = self.raw_requestline
        words = raw.split() if raw.isascii() else []
        version = _VERSIONS.get(words[2]) if len(words) == 3 else None
        if version is None or words[1].startswith(b"//") or self.protocol_version != "HTTP/1.1":
            return super().parse_request()
        self.command, self.path = words[0].decode("ascii"), words[1].decode("ascii")
        self.request_version = version
        self.requestline = raw.decode("ascii").rstrip("\r\n")
        self.close_connection = version != "HTTP/1.1"
        lines: list[bytes] = []
        while True:
            line = self.rfile.readline(_MAXLINE + 1)
            if len(line) > _MAXLINE:
                explain = str(http.client.LineTooLong("header line"))
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long", explain)
                return False
            lines.append(line)
            if len(lines) > _MAXHEADERS:
                msg = f"got more than {_MAXHEADERS} headers"
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers", msg)
                return False
            if line in (b"\r\n", b"\n", b""):
                break
        self.headers = _simple_headers(lines, self.MessageClass) or _parsed_headers(lines, self.MessageClass)
        conntype = self.headers.get("Connection", "").lower()
        if conntype == "close":
            self.close_connection = True
        elif conntype == "keep-alive":
            self.close_connection = False
        expect = self.headers.get("Expect", "")
        if expect.lower() == "100-continue" and version == "HTTP/1.1":
            return bool(self.handle_expect_100())
        return True

    def handle_expect_100(self) -> bool:
        ok = super().handle_expect_100()
        self.wfile.flush()  # the client waits for it before sending the body (wfile may buffer)
        return ok


def _simple_headers(lines: list[bytes], cls: type) -> http.client.HTTPMessage | None:
    """The headers as the email parser stores them, or None for a block it may read otherwise."""
    if lines[-1] not in (b"\r\n", b"\n"):  # no blank line ends the block
        return None
    msg = cls()
    for line in lines[:-1]:
        m = _SIMPLE.fullmatch(line)
        if m is None:
            return None
        msg.set_raw(m.group(1).decode("ascii"), m.group(2).decode("iso-8859-1"))
    return msg


def _parsed_headers(lines: list[bytes], cls: type) -> http.client.HTTPMessage:
    # what http.client.parse_headers does once the lines are read
    return email.parser.Parser(_class=cls).parsestr(b"".join(lines).decode("iso-8859-1"))
