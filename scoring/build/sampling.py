"""Which anchor each instance slot tries, lazily (issue 33 item 2).

A slot looks at a few dozen anchors of a relation's pools, and a shard's slots at a few thousand at
most, however large the pools are. The anchors' seeded order is therefore a permutation drawn one
position at a time (a Fisher-Yates shuffle run from the front, its swaps kept in a dict): position
p costs one draw the first time it is read, and reading the first m positions costs O(m) time and
memory, never O(pool).

A pool of at most EAGER_UP_TO anchors is shuffled whole instead, with random.shuffle as the
builder always did (a few milliseconds): every benchmark of a city-sized extract is the one
earlier builds made, byte for byte. The lazy draw, another permutation of the same seeds, serves
the larger pools of regional extracts, which the whole-pool shuffle made cost O(pool) per shard.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from scoring.extract.pools import FeaturePools, PoolFeature
from scoring.relations import CATALOGUE


def seed_for(*parts) -> int:
    """A 64-bit seed from the parts' text (the same parts, the same seed on any machine)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big")


# Pools up to this many anchors are shuffled whole, as before (see the module's docstring).
EAGER_UP_TO = 50_000


class LazyPermutation:
    """A seeded uniform permutation of `items`, its positions drawn on first read: position p
    holds items[j] for the j a front-to-back Fisher-Yates shuffle puts there. Up to EAGER_UP_TO
    items, the permutation random.shuffle makes, drawn at once."""

    def __init__(self, items: Sequence[Any], rng: random.Random, eager_up_to: int = EAGER_UP_TO):
        self._items = items
        self._rng = rng
        self._swapped: dict[int, int] = {}  # position -> index of the item now there, if moved
        self._order: list[int] = []  # the drawn prefix: item indices of positions 0..len-1
        self.eager = len(items) <= eager_up_to
        if self.eager:  # shuffling indices permutes as shuffling the items would
            self._order = list(range(len(items)))
            rng.shuffle(self._order)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, p: int) -> Any:
        n = len(self._items)
        if not 0 <= p < n:
            raise IndexError(p)
        while len(self._order) <= p:
            i = len(self._order)
            j = i + self._rng.randrange(n - i)
            at_j = self._swapped.get(j, j)
            self._swapped[j] = self._swapped.pop(i, i)
            self._order.append(at_j)
        return self._items[self._order[p]]


class AnchorOrder:
    """A relation's anchors in its seeded order: each anchor kind's features in a lazy permutation,
    the kinds one after the other in the relation's order of preference."""

    def __init__(self, parts: list[LazyPermutation]):
        self._parts = [p for p in parts if len(p)]
        self._n = sum(len(p) for p in self._parts)
        # every part shuffled whole: the rescue walk may read every anchor, as it always did
        self.eager = all(p.eager for p in self._parts)

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __getitem__(self, p: int) -> PoolFeature:
        if not 0 <= p < self._n:
            raise IndexError(p)
        for part in self._parts:
            if p < len(part):
                return part[p]
            p -= len(part)
        raise IndexError(p)  # unreachable: p < the parts' total


def anchor_order(pools: FeaturePools, code: str, seed: int) -> AnchorOrder:
    """The anchors of relation `code` in the seeded order its slots walk (nothing drawn yet)."""
    rel = CATALOGUE[code]
    parts = []
    for kind in rel.anchor_kinds:
        rng = random.Random(seed_for(seed, pools.city, code, kind))
        parts.append(LazyPermutation(pools.features.get(kind, []), rng))
    return AnchorOrder(parts)
