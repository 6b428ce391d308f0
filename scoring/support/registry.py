"""One small registry for every extension point: relations, measures, answer types, endpoint
kinds, report tables. Records are registered by name, kept in registration order (catalogue
order is part of the output) and looked up by name; an unknown name is a one-line error that
suggests the nearest names.

>>> colours: Registry[str] = Registry("colour")
>>> @colours.register("red")
... def red() -> str:
...     return "#f00"
>>> colours["red"]()
'#f00'
>>> colours["rde"]
Traceback (most recent call last):
...
scoring.support.registry.UnknownNameError: unknown colour 'rde' (did you mean red?)
>>> "red" in colours, len(colours), list(colours)
(True, 1, ['red'])
>>> codes: Registry[int] = Registry("relation")
>>> for code in ("M01", "M14", "M15", "M18"):
...     _ = codes.add(code, 0)
>>> codes.suggest("m1")
['M01', 'M18', 'M15']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from scoring.errors import InputError

T = TypeVar("T")


def _folded(name: str) -> str:
    return re.sub(r"\d+", lambda m: str(int(m.group())), name.casefold())


class UnknownNameError(KeyError, InputError):
    """A name no record is registered under: a KeyError for mapping code, an InputError (one-line
    message, exit code 2) for the command line."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Mapping[str, T], Generic[T]):
    """Records of one kind by name, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Register `item` under `name`; a name is registered once."""
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`: the decorated object is the record."""

        def deco(item: T) -> T:
            return self.add(name, item)

        return deco

    def replace(self, name: str, item: T) -> T:
        """Swap the record of a registered name (a hook completing its record)."""
        self[name]
        self._items[name] = item
        return item

    def suggest(self, name: str) -> list[str]:
        """Registered names close to `name`, nearest first: the same but for case and leading
        zeros first (`m1` for M01), then by similarity.

        >>> Registry("relation").suggest("m1")
        []
        """
        same = [n for n in self._items if _folded(n) == _folded(name)]
        folded = {n.casefold(): n for n in self._items}
        close = [folded[n] for n in difflib.get_close_matches(name.casefold(), folded, n=3, cutoff=0.5)]
        return (same + [n for n in close if n not in same])[:3]

    def unknown(self, name: str) -> UnknownNameError:
        """The error for an unknown `name`, with the nearest registered names."""
        near = self.suggest(str(name))
        hint = f"did you mean {' or '.join(near)}?" if near else f"known: {', '.join(self._items)}"
        return UnknownNameError(f"unknown {self.kind} {name!r} ({hint})")

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise self.unknown(name) from None

    def __contains__(self, name: Any) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._items)!r})"
