"""Secrets out of everything written or shown: a key in every form it may take in a message
(`secret_forms`), and the `Redactor` that replaces those forms, and any long-enough prefix or
suffix of them (a server's message cut near a length limit), by ``<redacted>``."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, quote_plus

# Names of request parameters that carry a credential (`api_key`, `access_token`, `password`);
# not `max_tokens` and its kin, which count tokens.
_CREDENTIAL_NAME = re.compile(
    r"api[_-]?key|apikey|secret|passw|credential|bearer|authori[sz]ation|cookie"
    r"|(?:access|auth|refresh|session|id|bearer)[_-]?token|^token$|^key$",
    re.IGNORECASE,
)
# Values shaped like a key: a provider's key prefix, a bearer header, or a long token mixing
# upper case, lower case and digits (no slash or dot: model paths and hex digests pass).
_KEY_VALUE = re.compile(
    r"^(?:Bearer\s|Basic\s)"
    r"|^(?:sk|pk|rk)-[\w-]{16,}|^(?:gsk|hf|ghp|gho|ghs|xai|xox[abp]|glpat|r8|AKIA)[_-]?[\w-]{16,}"
    r"|^AIza[\w-]{30,}"
    r"|^(?=[\w-]*[a-z])(?=[\w-]*[A-Z])(?=[\w-]*\d)[\w-]{32,}$"
)


def credential_in(value: Any, path: str = "") -> str | None:
    """The dotted place of the first credential-like entry in a JSON-like ``value`` (a name
    that names a credential, holding a non-empty string, or a key-shaped string anywhere), or None.

    >>> credential_in({"reasoning_effort": "low", "chat": {"api_key": "x1"}})
    'chat.api_key'
    >>> credential_in({"stop": ["sk-proj-abcdefghijklmnop1234"], "max_new_tokens": 9})
    'stop[0]'
    >>> credential_in({"adapter": "0123456789abcdef0123456789abcdef01234567"}) is None
    True
    """
    if isinstance(value, Mapping):
        for name, item in value.items():
            where = f"{path}.{name}" if path else str(name)
            if _CREDENTIAL_NAME.search(str(name)) and isinstance(item, str) and item.strip():
                return where
            found = credential_in(item, where)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = credential_in(item, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(value, str) and _KEY_VALUE.search(value.strip()):
        return path or "(value)"
    return None


def secret_forms(secret: str) -> set[str]:
    """Every way ``secret`` may appear in a message: raw, stripped, escaped as in JSON or a
    Python repr (``\\r``), percent-encoded, and the part of any base64 (Basic auth) that it alone
    determines, at each of the three alignments."""
    forms: set[str] = set()
    for s in {secret, secret.strip()}:
        forms |= {s, json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1], repr(s)[1:-1]}
        forms |= {
            repr(s.encode("utf-8", "backslashreplace"))[2:-1],
            quote(s, safe=""),
            quote_plus(s, safe=""),
        }
        raw = s.encode("utf-8", "backslashreplace")
        for shift in range(3):
            enc = base64.b64encode(b"\0" * shift + raw).decode("ascii")
            # Only characters whose 6 bits all come from the secret (none from what surrounds it).
            start, end = -(-4 * shift // 3), 4 * (shift + len(raw)) // 3
            if end - start >= 8:
                forms.add(enc[start:end])
    return {f for f in forms if len(f) >= 4}


# A key's first or last characters this many or more, wherever they stand, are redacted too: a
# message cut (a server echoing the key near a length limit) must not leave most of a key.
KEY_FRAGMENT = 8
REDACTED = "<redacted>"


class Redactor:
    """Replaces known secrets, in every form (see `secret_forms`), in strings / nested
    JSON-like values; also any prefix or suffix of a form at least KEY_FRAGMENT long."""

    def __init__(self, secrets: list[str | None] = ()):  # type: ignore[assignment]
        self._secrets: list[str] = []
        for s in secrets:
            self.add(s)

    def add(self, secret: str | None) -> None:
        """Redact ``secret`` (in every form) from now on; None or under 4 characters: nothing."""
        if secret and len(secret) >= 4:
            self._secrets = sorted({*self._secrets, *secret_forms(secret)}, key=len, reverse=True)

    def text(self, s: str) -> str:
        """``s`` with every form of every secret, and their long-enough ends, redacted."""
        for secret in self._secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        for secret in self._secrets:
            if len(secret) > KEY_FRAGMENT:
                s = _suffixes(_prefixes(s, secret), secret)
        return s

    def value(self, v: Any) -> Any:
        """A JSON-like value with every string in it (keys too) redacted."""
        if not self._secrets:
            return v
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {self.value(k): self.value(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        return v

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"


def _prefixes(s: str, secret: str) -> str:
    """``s`` with every run of ``secret``'s first characters (KEY_FRAGMENT or more) redacted.

    >>> _prefixes("cut: sk-abcdefgh12 and sk-abcdX", "sk-abcdefgh1234")
    'cut: <redacted> and sk-abcdX'
    """
    head = secret[:KEY_FRAGMENT]
    parts, i = [], 0
    while (j := s.find(head, i)) >= 0:
        k = KEY_FRAGMENT
        while k < len(secret) and j + k < len(s) and s[j + k] == secret[k]:
            k += 1
        parts += [s[i:j], REDACTED]
        i = j + k
    return "".join([*parts, s[i:]]) if parts else s


def _suffixes(s: str, secret: str) -> str:
    """``s`` with every run of ``secret``'s last characters (KEY_FRAGMENT or more) redacted.

    >>> _suffixes("...h1234567 ok", "sk-abcdefgh1234567")
    '...<redacted> ok'
    """
    tail = secret[-KEY_FRAGMENT:]
    parts, i = [], 0
    while (j := s.find(tail, i)) >= 0:
        k = KEY_FRAGMENT  # characters matched, backwards from the end of the occurrence
        while k < len(secret) and (before := j + KEY_FRAGMENT - k - 1) >= i and s[before] == secret[-k - 1]:
            k += 1
        parts += [s[i : j + KEY_FRAGMENT - k], REDACTED]
        i = j + KEY_FRAGMENT
    return "".join([*parts, s[i:]]) if parts else s
