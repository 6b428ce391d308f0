"""A value computed once per live object, for objects that are never modified once made
(benchmark instances, shapely geometries): dicts are unhashable and hashing a geometry costs as
much as the work saved, so the key is the object's identity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class IdentityMemo(Generic[T, R]):
    """``fn(obj)``, computed once per object while the memo holds it (held, so its id cannot be
    reused by another object); the whole memo is dropped when it reaches ``maxsize``.

    >>> calls = []
    >>> size = IdentityMemo(lambda d: calls.append(1) or len(d), maxsize=8)
    >>> d = {"a": 1}
    >>> size(d), size(d), size({"a": 1}), len(calls)
    (1, 1, 1, 2)
    """

    def __init__(self, fn: Callable[[T], R], maxsize: int):
        self.fn = fn
        self.maxsize = maxsize
        self._memo: dict[int, tuple[T, R]] = {}

    def __call__(self, obj: T) -> R:
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self.fn(obj)
        if len(self._memo) >= self.maxsize:
            self._memo.clear()
        self._memo[id(obj)] = (obj, value)
        return value
