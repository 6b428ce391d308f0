"""A build's work units: instance slots found in small batches, then each shard finished.

Every instance slot is a pure function of (pools, seed, relation, task, slot index) except for one
thing: a slot skips a candidate that asks what an earlier slot of its shard already asks (the
`seen` keys). So the slots are searched in batches of SLOTS_PER_BATCH, each slot on its own
(round 1: many small jobs, so no long shard keeps one core busy while the other idles at the end
of the build), and each shard is then finished in slot order (round 2): a slot whose first valid
candidate an earlier slot already took is searched again with the keys seen so far, which is
exactly what the one-pass search found (its walk is the same up to that candidate); then the
shard's rescue walk, its report, its unanswerable variants and the context near its maps. The
files are those of one pass over each shard, byte for byte.

Instances travel between the rounds as their JSON lines (the file's own text): a string pickles
and unpickles at memory speed, where an instance's nested dicts cost the builder's process a
tenth of a second per thousand, while its workers waited.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

from scoring.build.context import near_instances
from scoring.build.sampling import AnchorOrder, anchor_order, seed_for
from scoring.extract.pools import FeaturePools
from scoring.relations import CATALOGUE
from scoring.relations.base import TOLERANCES, UNITS, BuildContext, QAItem, shuffle_options
from scoring.relations.paper import apply_protocol
from scoring.relations.unanswerable import add_unanswerable
from scoring.vocab import MODALITIES

TRIES_PER_SLOT = 40
SCARCE_CLASS = 40  # fewer features of a kind in a task's pool: reported with a shortfall
CONSTRUCT_TRIES = 400  # anchors a slot's construction pass may look at
# anchors a shard's rescue walk may look at: a relation nothing in the pools can satisfy costs
# the same on a city and on a country, instead of one builder call per feature
RESCUE_TRIES = 4000
SLOTS_PER_BATCH = 5  # slots of one round-1 job (a shard's 25 slots: 5 jobs)


def dumps(obj) -> str:
    """Canonical JSON (sorted keys would scramble readable field order; we keep insertion order,
    which is deterministic, and forbid NaN)."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@dataclass(frozen=True)
class Shard:
    """The instances of one (relation, task): n slots under one seed and protocol."""

    code: str
    task: str
    n: int
    seed: int
    protocol: str = "spatialgap"
    unanswerable_share: float = 0.0  # variants per answerable item (scoring.relations.unanswerable)


@dataclass(frozen=True)
class SlotBatch:
    """Round 1: slots first..stop-1 of a shard, each searched without the others."""

    shard: Shard
    first: int
    stop: int


@dataclass(frozen=True)
class Found:
    """A slot's first valid candidate (its JSON line and key; None: none) and the tries it took."""

    k: int
    line: str | None
    key: str | None
    attempts: int
    seconds: float


@dataclass(frozen=True)
class ShardFinish:
    """Round 2: a shard's slots as round 1 found them, to finish in slot order."""

    shard: Shard
    found: tuple[Found, ...]


def slot_batches(shard: Shard, step: int = SLOTS_PER_BATCH) -> list[SlotBatch]:
    """The shard's slots in round-1 jobs of `step` slots."""
    return [SlotBatch(shard, k, min(k + step, shard.n)) for k in range(0, shard.n, step)]


def build_slot(
    pools: FeaturePools,
    code: str,
    task: str,
    seed: int,
    k: int,
    n_slots: int,
    anchors: AnchorOrder | None = None,
    protocol: str = "spatialgap",
    seen: set[str] | None = None,
    spare: Iterator[int] | None = None,
) -> tuple[dict | None, int]:
    """Instance number k of (relation, task): (instance or None, attempts). A candidate whose
    key is in `seen` (an earlier slot's instance) is skipped like an invalid one. With `spare`
    (anchor indices shared by the slots of a rescue pass), the slot walks those instead."""
    rel = CATALOGUE[code]
    anchors = anchors if anchors is not None else anchor_order(pools, code, seed)
    if not anchors:
        return None, 0
    builder = rel.build_qa if task == "qa" else rel.build_edit
    tries = min(TRIES_PER_SLOT, max(len(anchors), 1))
    # Natural cases first; where a slot finds none, controlled constructions derived from real
    # features (recorded in provenance) for the relations that have them.
    attempts = 0
    for construct in (False, True) if rel.constructs and spare is None else (False,):
        # A construction pass looks further down the anchors: most refusals there are instant
        # (a road too short), and the few usable anchors may be far apart in the order.
        walk = (
            spare if spare is not None else range(min(CONSTRUCT_TRIES, len(anchors)) if construct else tries)
        )
        for j in walk:
            attempts += 1
            # (the construction pass walks every anchor from k: a stride of n_slots would visit
            # only the anchors congruent to k when n_slots divides their number)
            at = j if spare is not None else (k + j) if construct else (k + j * n_slots)
            anchor = anchors[at % len(anchors)]
            parts = (seed, pools.city, code, task, k, j) + (
                ("construct",) if construct else ("rescue",) if spare is not None else ()
            )
            rng = random.Random(seed_for(*parts))
            item = builder(BuildContext(pools, rng, protocol, construct), anchor)
            if item is not None:
                inst = to_instance(pools, code, task, k, item)
                prng = random.Random(seed_for(seed, pools.city, code, task, k, "protocol"))
                inst = apply_protocol(inst, protocol, prng, k)
                orng = random.Random(seed_for(seed, pools.city, code, task, k, "options"))
                inst = shuffle_options(inst, orng)
                if seen is not None and instance_key(inst) in seen:
                    continue
                return inst, attempts
    return None, attempts


def instance_key(inst: dict) -> str:
    """Two instances with this key ask the same thing about the same scene."""
    return hashlib.sha256(
        dumps([inst["scene"], inst.get("question") or inst.get("instruction")]).encode()
    ).hexdigest()


def to_instance(pools: FeaturePools, code: str, task: str, k: int, item) -> dict:
    """Slot k's item as the instance record the files hold."""
    rel = CATALOGUE[code]
    head = {
        "id": f"{pools.city}-{task}-{code}-{k:03d}",
        "city": pools.city,
        "task": task,
        "relation": code,
        "family": rel.family,
        "crs": pools.crs.as_dict(),
        "scene": item.scene.to_geojson(),
    }
    info = item.information
    if isinstance(item, QAItem):
        answerable = item.answerable
        inst = {
            **head,
            "question": item.question,
            "answer_type": item.answer_type,
            "answer": item.answer,
            "unit": UNITS.get(item.answer_type),
            "tolerance": TOLERANCES.get(item.answer_type),
            "choices": item.choices,
            "correct_choice": item.correct_choice,
            "answerable": {m: answerable for m in MODALITIES},
            "information": info,
        }
    else:
        inst = {
            **head,
            "target": item.target,
            "instruction": item.instruction,
            "constraints": item.constraints,
            "allowed_operations": item.allowed_operations,
            "reference_edit": item.reference_edit,
            "information": info,
        }
    inst.update(
        {
            "facts": item.facts,
            "margin": item.margin,
            "provenance": {"source_sha256": pools.source_sha256, "features": item.provenance},
        }
    )
    return inst


# ---------------------------------------------------------------- the two rounds


def unbuildable(pools: FeaturePools, shard: Shard) -> tuple[list[str], str | None]:
    """The pool kinds the relation needs and this task's pools lack, and what else it lacks."""
    rel = CATALOGUE[shard.code]
    missing = [k for k in rel.needs if not pools.features.get(k)]
    absent = None if missing or rel.requires is None else rel.requires(pools)
    return missing, absent


def find_slots(batch: SlotBatch, whole: FeaturePools) -> list[Found]:
    """Round 1: each slot of the batch searched on its own (no other slot's keys)."""
    shard = batch.shard
    pools = whole.for_task(shard.task)
    if any(unbuildable(pools, shard)):
        return []
    anchors = _anchors(pools, shard.code, shard.seed)
    out = []
    for k in range(batch.first, batch.stop):
        t0 = time.perf_counter()
        inst, tries = build_slot(
            pools, shard.code, shard.task, shard.seed, k, shard.n, anchors, shard.protocol
        )
        line = None if inst is None else dumps(inst)
        key = None if inst is None else instance_key(inst)
        out.append(Found(k, line, key, tries, time.perf_counter() - t0))
    return out


def finish_shard(job: ShardFinish, whole: FeaturePools) -> dict:
    """Round 2: the shard's instances as JSON lines (with their unanswerable variants), a light
    record of each for the manifest, its build report and the context near its maps."""
    shard = job.shard
    pools = whole.for_task(shard.task)  # QA and editing draw from separate pools
    missing, absent = unbuildable(pools, shard)
    t0 = time.perf_counter()
    filled: list[tuple[dict, str | None]] = []
    attempts = 0
    if not missing and not absent:
        filled, attempts = _fill_slots(pools, shard, {f.k: f for f in job.found})
    instances = [i for i, _ in filled]
    failed = shard.n - len(instances) if not missing and not absent else 0
    seconds = time.perf_counter() - t0 + sum(f.seconds for f in job.found)  # both rounds' search
    out = _shard_result(shard, pools, instances, attempts, failed, missing, absent, seconds)
    kept = out.pop("instances")
    out["context"] = near_instances(whole, kept)  # from the whole city, both halves
    # an instance round 1 found is its line already (nothing after round 1 changes it)
    lines = [line for _, line in filled] + [None] * (len(kept) - len(filled))
    out["lines"] = [line if line is not None else dumps(i) for i, line in zip(kept, lines, strict=True)]
    out["records"] = [record_of(i) for i in kept]
    return out


def record_of(inst: dict) -> dict:
    """What the manifest counts of an instance (scoring.relations.unanswerable's summary)."""
    rec = {"task": inst["task"], "family": inst["family"]}
    if "answerable" in inst:  # QA only
        rec["answerable"] = inst["answerable"]
    if "unanswerable" in inst:
        rec["unanswerable"] = {"kind": inst["unanswerable"]["kind"]}
    return rec


def _fill_slots(
    pools: FeaturePools, shard: Shard, found: dict[int, Found]
) -> tuple[list[tuple[dict, str | None]], int]:
    """The shard's instances in slot order, each with its line when round 1 made it (else
    None), and the candidates tried."""
    anchors = _anchors(pools, shard.code, shard.seed)
    seen: set[str] = set()
    slots: dict[int, tuple[dict, str | None]] = {}
    attempts = 0
    for k in range(shard.n):
        first = found[k]
        if first.line is None:  # no valid candidate at all: none with other slots' keys either
            attempts += first.attempts
            continue
        inst: dict | None
        line: str | None = None
        if first.key not in seen:
            inst, line, key, tries = json.loads(first.line), first.line, first.key, first.attempts
        else:  # an earlier slot took it: the walk goes on past it, as one pass would have
            inst, tries = build_slot(
                pools, shard.code, shard.task, shard.seed, k, shard.n, anchors, shard.protocol, seen
            )
            key = None if inst is None else instance_key(inst)
        attempts += tries
        if inst is None or key is None:
            continue
        seen.add(key)
        slots[k] = (inst, line)
    # Slots that found nothing among their own anchors (a stride of n visits only one residue
    # class) walk the first anchors, under their own rng, once for all of them (T04 editing fell 1
    # short on Helsinki under seed 90417 while other anchors held valid candidates).
    spare = iter(range(len(anchors) if anchors.eager else min(len(anchors), RESCUE_TRIES)))
    for k in (k for k in range(shard.n) if k not in slots):
        inst, tries = build_slot(
            pools, shard.code, shard.task, shard.seed, k, shard.n, anchors, shard.protocol, seen, spare
        )
        attempts += tries
        if inst is not None and instance_key(inst) not in seen:
            seen.add(instance_key(inst))
            slots[k] = (inst, None)
    return [slots[k] for k in sorted(slots)], attempts


def needs_rework(job: ShardFinish) -> bool:
    """Whether round 2 may search again (a slot without a candidate, or two slots with one): such
    shards go first, so a long rescue walk does not start last."""
    keys = [f.key for f in job.found]
    return None in keys or len(set(keys)) < len(keys)


# per pools object (a city's QA and editing halves): (the pools, {(code, seed): anchor order})
_ANCHORS: dict[int, tuple[FeaturePools, dict[tuple[str, int], AnchorOrder]]] = {}


def _anchors(pools: FeaturePools, code: str, seed: int) -> AnchorOrder:
    """A relation's anchor order, drawn once per process and pools (a whole shuffle of a large
    pool costs milliseconds, and a shard's batches and its finish each need it). Reading
    position p gives the same anchor whichever positions were read before."""
    held = _ANCHORS.get(id(pools))
    if held is None or held[0] is not pools:
        if len(_ANCHORS) >= 4:  # another city's pools: drop the last one's orders
            _ANCHORS.clear()
        held = _ANCHORS[id(pools)] = (pools, {})
    orders = held[1]
    if (code, seed) not in orders:
        orders[code, seed] = anchor_order(pools, code, seed)
    return orders[code, seed]


def _shard_result(shard, pools, instances, attempts, failed, missing, absent, seconds) -> dict:
    """The shard's instances (with their unanswerable variants) and its build report."""
    report = {
        "relation": shard.code,
        "task": shard.task,
        "requested": shard.n,
        "built": len(instances),
        "attempts": attempts,
        "seconds": round(seconds, 3),
    }
    if missing:
        report["shortfall"] = f"the extract has no usable {', '.join(missing)} features"
    elif absent:
        report["shortfall"] = f"the extract has no {absent}"
    elif len(instances) < shard.n:
        shortfall = (
            f"only {len(instances)} of {shard.n} candidates passed the margins "
            f"and checks ({failed} slots found no valid candidate)"
        )
        # name the feature classes this task's pool has too few of (Paris: 3 buildings)
        none = [k for k, v in pools.features.items() if not v]
        few = [f"{len(v)} {k}" for k, v in pools.features.items() if 0 < len(v) < SCARCE_CLASS]
        if none or few:
            said = ([f"no {' or '.join(none)}"] if none else []) + ([f"only {', '.join(few)}"] if few else [])
            shortfall += f"; the extract has {' and '.join(said)} features for this task"
        report["shortfall"] = shortfall
    constructed = sum(
        1
        for i in instances
        if any(f["origin"] == "constructed" for f in i["provenance"]["features"].values())
    )
    report["constructed"] = constructed
    if shard.unanswerable_share > 0:  # after the answerable items, which they leave untouched
        extra = add_unanswerable(instances, seed=shard.seed, share=shard.unanswerable_share)
        report["unanswerable"] = len(extra)
        instances = instances + extra
    return {"instances": instances, "report": report}
