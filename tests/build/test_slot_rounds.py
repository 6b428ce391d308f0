"""The build's two rounds (scoring.build.shards: slots searched in small batches on their own,
then each shard finished in slot order) give what one pass over each shard gives: the same
instances, in the same slots, after the same number of tries. Where two slots' first valid
candidates ask the same thing (a pool of few anchors: slots share them), round 2 searches the
later slot again with the keys seen so far, as the one pass did."""

from __future__ import annotations

import dataclasses

import pytest

from scoring.build import shards
from scoring.build.sampling import anchor_order
from scoring.extract.osm import load_pools
from scoring.relations import CATALOGUE


@pytest.fixture(scope="module")
def pools():
    return load_pools()


def _few_anchors(pools, code: str, n: int):
    """The pools with only `n` features of the relation's first anchor kind (and none of its
    other anchor kinds): its slots walk the same few anchors."""
    rel = CATALOGUE[code]
    features = dict(pools.features)
    features[rel.anchor_kinds[0]] = features[rel.anchor_kinds[0]][:n]
    for kind in rel.anchor_kinds[1:]:
        features[kind] = []
    return dataclasses.replace(pools, features=features, _trees={})


def _one_pass(pools, shard: shards.Shard) -> tuple[list[str], int]:
    """The shard's lines and tries as the builder made them before the rounds: slot after slot,
    each skipping what an earlier slot took, then one rescue walk over the first anchors."""
    anchors = anchor_order(pools, shard.code, shard.seed)
    seen: set[str] = set()
    slots: dict[int, dict] = {}
    attempts = 0
    args = (pools, shard.code, shard.task, shard.seed)
    for k in range(shard.n):
        inst, tries = shards.build_slot(*args, k, shard.n, anchors, shard.protocol, seen)
        attempts += tries
        if inst is not None:
            seen.add(shards.instance_key(inst))
            slots[k] = inst
    spare = iter(range(len(anchors)))
    for k in [k for k in range(shard.n) if k not in slots]:
        inst, tries = shards.build_slot(*args, k, shard.n, anchors, shard.protocol, seen, spare)
        attempts += tries
        if inst is not None and shards.instance_key(inst) not in seen:
            seen.add(shards.instance_key(inst))
            slots[k] = inst
    return [shards.dumps(slots[k]) for k in sorted(slots)], attempts


def _rounds(pools, shard: shards.Shard) -> dict:
    found = [f for batch in shards.slot_batches(shard) for f in shards.find_slots(batch, pools)]
    return found, shards.finish_shard(shards.ShardFinish(shard, tuple(found)), pools)


@pytest.mark.parametrize(("code", "task"), [("M18", "qa"), ("D06", "edit"), ("M02", "edit"), ("T11", "edit")])
def test_rounds_give_one_pass_where_slots_share_their_first_candidates(pools, code, task):
    small = _few_anchors(pools, code, 3)
    shard = shards.Shard(code, task, 12, 0)
    found, result = _rounds(small, shard)
    keys = [f.key for f in found if f.key is not None]
    assert len(set(keys)) < len(keys)  # the case at stake: round 1 found some candidate twice
    lines, attempts = _one_pass(small, shard)
    assert result["lines"] == lines
    assert result["report"]["attempts"] == attempts
    assert len(set(result["lines"])) == len(result["lines"])  # no question asked twice


@pytest.mark.parametrize(("code", "task"), [("O02", "qa"), ("T04", "edit")])
def test_rounds_give_one_pass_on_a_whole_pool(pools, code, task):
    shard = shards.Shard(code, task, 7, 5)
    found, result = _rounds(pools, shard)
    assert [f.k for f in found] == list(range(7))
    assert (result["lines"], result["report"]["attempts"]) == _one_pass(pools, shard)


def test_batches_cover_every_slot_once():
    shard = shards.Shard("M01", "qa", 2 * shards.SLOTS_PER_BATCH + 1, 0)
    batches = shards.slot_batches(shard)
    assert [k for b in batches for k in range(b.first, b.stop)] == list(range(shard.n))
    assert len(batches) == 3 and batches[-1].stop - batches[-1].first == 1
    assert shards.slot_batches(shards.Shard("M01", "qa", 0, 0)) == []
