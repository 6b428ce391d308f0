"""Sentences with named slots, written once and used both ways: rendered into the text a model
reads (questions, constraint lines) and read back by a regex derived from the same sentence (the
`tools` agent), so the wording and the pattern cannot drift apart.

>>> w = Wording("What is the bearing from {a} to {b}?")
>>> w.render(a="F0", b="F1")
'What is the bearing from F0 to F1?'
>>> w.read("What is the bearing from F0 to F1?")
{'a': 'F0', 'b': 'F1'}
>>> Wording("within {d:g} m of {a} (at most {d:g} m)", d=NUMBER).read("within 25 m of F0 (at most 25 m)")
{'d': '25', 'a': 'F0'}
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

FEATURE_ID = r"F\d+"
FEATURE_IDS = r"F\d+(?:(?:, | and )F\d+)*"  # "F1, F2 and F3" or "F1, F2, F3"
NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
_SLOT = re.compile(r"\{(\w+)(?::[^{}]*)?\}")


def one_of(*words: str) -> str:
    """A slot pattern accepting exactly these words."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


def ids_in(text: str) -> list[str]:
    return re.findall(FEATURE_ID, text)


def id_list(ids: list[str]) -> str:
    """ "F1, F2 and F3": how questions list feature ids."""
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else "".join(ids)


class Wording:
    """A sentence with `{name}` / `{name:spec}` slots (str.format syntax). Each slot's value is
    matched by its pattern: a feature id unless given as a keyword (`Wording(text, d=NUMBER)`).
    A slot used twice must read the same value both times."""

    def __init__(self, text: str, **slots: str) -> None:
        if "{{" in text or "}}" in text:
            raise ValueError(f"no literal braces in a wording: {text!r}")
        self.text, self.slots = text, slots
        unknown = set(slots) - set(self.names)
        if unknown:
            raise ValueError(f"slot patterns for absent slots {sorted(unknown)} in {text!r}")

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(m.group(1) for m in _SLOT.finditer(self.text)))

    def render(self, **values: Any) -> str:
        return self.text.format(**values)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        parts, pos, seen = [], 0, set()
        for m in _SLOT.finditer(self.text):
            parts.append(re.escape(self.text[pos : m.start()]))
            name = m.group(1)
            if name in seen:
                parts.append(f"(?P={name})")
            else:
                parts.append(f"(?P<{name}>{self.slots.get(name, FEATURE_ID)})")
                seen.add(name)
            pos = m.end()
        parts.append(re.escape(self.text[pos:]))
        return re.compile("^" + "".join(parts) + "$", re.S)

    def read(self, text: str) -> dict[str, str] | None:
        """The slot values if `text` is this sentence, else None."""
        m = self.pattern.match(text)
        return m.groupdict() if m else None

    def then(self, tail: str, **slots: str) -> Wording:
        """This sentence followed by `tail` (more slots allowed)."""
        return Wording(self.text + tail, **{**self.slots, **slots})

    def __repr__(self) -> str:
        return f"Wording({self.text!r})"
