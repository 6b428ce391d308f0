"""Issue 33 item 2: a large pool's anchors come from a lazy seeded permutation, drawn one position
at a time, so sampling costs what the slots read, not the pool's size; a city-sized pool keeps
random.shuffle's order (earlier benchmarks rebuild byte for byte)."""

from __future__ import annotations

import random
from collections import Counter

from scoring.build.sampling import AnchorOrder, LazyPermutation


def test_a_lazy_permutation_is_a_permutation_drawn_only_as_far_as_read():
    items = list(range(1000))
    perm = LazyPermutation(items, random.Random(7), eager_up_to=10)
    assert not perm.eager
    assert perm[3] == LazyPermutation(items, random.Random(7), eager_up_to=10)[3]  # seeded
    assert len(perm._order) == 4  # only positions 0..3 drawn
    assert sorted(perm[p] for p in range(len(perm))) == items


def test_a_pool_up_to_the_eager_size_is_random_shuffles_order():
    items = list(range(1000))
    perm = LazyPermutation(items, random.Random(7))
    shuffled = items.copy()
    random.Random(7).shuffle(shuffled)
    assert perm.eager and [perm[p] for p in range(len(perm))] == shuffled


def test_lazy_positions_are_uniform():
    counts = Counter(LazyPermutation(list(range(5)), random.Random(s), eager_up_to=0)[0] for s in range(5000))
    assert all(800 < counts[v] < 1200 for v in range(5))


def test_anchor_order_takes_the_kinds_in_turn():
    a, b = list("abc"), list("xy")
    order = AnchorOrder(
        [
            LazyPermutation(a, random.Random(1)),
            LazyPermutation([], random.Random(2)),
            LazyPermutation(b, random.Random(3)),
        ]
    )
    assert (
        len(order) == 5 and sorted(order[p] for p in range(3)) == a and sorted(order[p] for p in (3, 4)) == b
    )
