"""IdentityMemo: once per live object, never a stale value for another object."""

import doctest

import scoring.support.memo
from scoring.support.memo import IdentityMemo


def test_examples():
    assert doctest.testmod(scoring.support.memo).failed == 0


def test_equal_but_distinct_objects_are_computed_apart_and_the_memo_is_bounded():
    seen = []
    memo = IdentityMemo(lambda d: seen.append(id(d)) or dict(d), maxsize=3)
    a, b = {"x": 1}, {"x": 1}
    assert memo(a) == memo(b) == {"x": 1} and len(seen) == 2
    memo(a)
    assert len(seen) == 2
    for _ in range(5):
        memo({"y": 2})
    assert len(memo._memo) <= 3
