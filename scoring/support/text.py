"""Text from outside (an endpoint's reply, a URL someone typed) made safe to keep."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Query parameters that carry a credential (`?api_key=`, `?access_token=`, Azure's `?sig=`).
_SECRET_PARAM = re.compile(r"key|token|secret|pass|sig|auth|cred|session", re.IGNORECASE)


def without_lone_surrogates(text: str) -> str:
    """``text`` with every UTF-16 surrogate code point replaced by U+FFFD (JSON's ``"\\ud800"``
    decodes to one, and no UTF-8 writer can encode it); the same object when there is none."""
    if not _LONE_SURROGATE.search(text):
        return text
    # A well-formed pair never survives json.loads as two code points, so every match is unpaired.
    return _LONE_SURROGATE.sub("\ufffd", text)


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries (userinfo, credential-like query values), raw and decoded,
    for a redactor to remove wherever an echo of the URL may appear."""
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password]
    except ValueError:
        return []
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if _SECRET_PARAM.search(name):
            found.append(value)
    for raw in re.findall(r"[?&]([^=&#]+)=([^&#]*)", url):
        if _SECRET_PARAM.search(unquote(raw[0])):
            found.append(raw[1])  # as typed (percent-encoded), besides parse_qsl's decoded form
    return [s for s in dict.fromkeys(found) if s and len(s) >= 4]
