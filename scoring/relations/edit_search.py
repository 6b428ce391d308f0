"""The builder's reference-edit search: proposals tried in order through the executor. The
translations of a chunk are moved and snapped at once, and the measures' batch forms (the same
GEOS calls, scoring.oracle.core.batch_of) judge their constraints at once: a candidate that
certainly fails is dropped, one that certainly holds (a number clear of its bounds by more than
the 6-decimal rounding) is kept, the rest go through `all_hold`. Every candidate thus gets the
verdict a one-by-one search gives it, and the first that holds is the same edit."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator

import numpy as np
import shapely

from scoring import oracle
from scoring.constraints.edits import EditError, EditResult, apply_edit, translated_on_grid, translation_of
from scoring.constraints.facts import all_hold
from scoring.geometry.scene import Scene

TARGET = "F0"
# Chunks grow: a search often ends within its first proposals (a single computed move), and
# when it does not, hundreds follow; a chunk computed past the hit is wasted.
FIRST_CHUNK, LAST_CHUNK = 8, 256
# facts.evaluate rounds a number to 6 decimals before comparing it: a batch value this close
# to a bound is left to the exact check.
ROUNDING_SLACK = 1e-6
# Measures that cost milliseconds per candidate (densified Hausdorff distances): a chunk's
# search leaves them to the one-by-one check, which stops at the first candidate that holds.
COSTLY = frozenset({"hausdorff_distance", "equals_eps", "boundary_covered_eps"})


def _chunks(proposals: Iterable[list[dict]], max_tries: int) -> Iterator[list[list[dict]]]:
    it = iter(proposals)
    size, taken = FIRST_CHUNK, 0
    while taken < max_tries:
        chunk = list(itertools.islice(it, min(size, max_tries - taken)))
        if not chunk:
            return
        taken += len(chunk)
        yield chunk
        size = min(2 * size, LAST_CHUNK)


def _batch_args(scene: Scene, c: dict, moved: np.ndarray) -> list | None:
    """The measure's arguments as facts.evaluate passes them, with the target's candidates in
    place of the target; None where the batch form does not apply."""
    args = c["args"]
    if c["measure"] in oracle.ATTRIBUTE_MEASURES or TARGET not in args or any(a not in scene for a in args):
        return None
    if c["measure"] == "displacement":
        return [scene.geom(TARGET), moved] if args[0] == TARGET else None
    return [moved if a == TARGET else scene.geom(a) for a in args]


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _verdicts(values: np.ndarray, c: dict, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(may hold, certainly holds) of check_constraint for each batch value."""
    op, want = c["op"], c.get("value")
    unknown = np.ones(len(values), dtype=bool), np.zeros(len(values), dtype=bool)
    if kind == "bool" and op == "is" and isinstance(want, bool):
        ok = values == want
        return ok, ok
    if kind == "id" and op == "is":
        names = np.array(c["args"][1:] + [None], dtype=object)  # index -1: undefined
        ok = names[values] == want
        return (values < 0) | ok, (values >= 0) & ok
    if kind == "number" and op in ("between", "at_most", "at_least"):
        lo = c.get("min") if op != "at_most" else -math.inf
        hi = c.get("max") if op != "at_least" else math.inf
        if not (_is_number(lo) and _is_number(hi)):
            return unknown
        assert lo is not None and hi is not None  # (for mypy: _is_number says so)
        v = values.astype(np.float64)
        may = np.isnan(v) | ((v >= lo - ROUNDING_SLACK) & (v <= hi + ROUNDING_SLACK))
        return may, (v >= lo + ROUNDING_SLACK) & (v <= hi - ROUNDING_SLACK)
    return unknown


def screen(
    scene: Scene, moved: np.ndarray, constraints: list[dict], skip: frozenset[str] = frozenset()
) -> tuple[np.ndarray, np.ndarray]:
    """For candidate target geometries: (no constraint certainly fails, every constraint
    certainly holds), by the measures' batch forms (not those of the measures in `skip`); the
    others need check_constraint."""
    alive = np.ones(len(moved), dtype=bool)
    certain = np.ones(len(moved), dtype=bool)
    for c in constraints:
        m = None if c["measure"] in skip else oracle.MEASURES.get(c["measure"])
        rows = np.flatnonzero(alive)
        values = None
        if m is not None and m.batch is not None and rows.size:
            args = _batch_args(scene, c, moved[rows])
            values = None if args is None else m.batch(*args, **(c.get("params") or {}))
        if m is None or values is None:
            certain[:] = False
            continue
        may, sure = _verdicts(np.asarray(values), c, m.kind)
        alive[rows[~may]] = False
        certain[rows[~sure]] = False
    return alive, alive & certain


def _results(
    scene: Scene, chunk: list[list[dict]], allowed: tuple, constraints: list[dict]
) -> Iterator[tuple[dict, EditResult | None, bool]]:
    """(edit, apply_edit's result, whether all constraints certainly hold) for each proposal of
    the chunk; None for one whose edit raises an EditError, changes nothing or certainly
    breaks a constraint."""
    shifts = [translation_of(ops, allowed) for ops in chunk]
    batched = [i for i, s in enumerate(shifts) if s is not None]
    before = scene.geom(TARGET)
    moved, exact = translated_on_grid(before, np.array([shifts[i] for i in batched]).reshape(-1, 2))
    keep = np.zeros(len(batched), dtype=bool)
    sure = np.zeros(len(batched), dtype=bool)
    rows = np.flatnonzero(exact)
    if rows.size:
        rows = rows[~shapely.equals_exact(moved[rows], before, tolerance=1e-9)]  # changed
        alive, certain = screen(scene, moved[rows], constraints, COSTLY)
        keep[rows[alive]] = True
        sure[rows[certain]] = True
    row = {i: j for j, i in enumerate(batched)}
    props = scene[TARGET].props
    for i, ops in enumerate(chunk):
        edit = {"operations": ops}
        j = row.get(i)
        if j is not None and exact[j]:
            if not keep[j]:
                yield edit, None, False
                continue
            yield (
                edit,
                EditResult(scene.replace(TARGET, geom=moved[j], props=dict(props)), True, False),
                sure[j],
            )
            continue
        try:
            yield edit, apply_edit(scene, TARGET, edit, allowed), False
        except EditError:
            yield edit, None, False


def nudges_hold(
    scene: Scene, shift: tuple[float, float], nudges: Iterable[tuple[float, float]], constraints: list[dict]
) -> bool | None:
    """Do the constraints hold after the translation `shift` followed by each nudge (as
    apply_edit computes it)? None when a nudged geometry needs apply_edit's GEOS snapping."""
    steps = np.array([[shift, n] for n in nudges], dtype=np.float64)
    moved, exact = translated_on_grid(scene.geom(TARGET), steps)
    if not exact.all():
        return None
    alive, certain = screen(scene, moved, constraints)
    if not alive.all():
        return False
    props = scene[TARGET].props
    return all(
        certain[j]
        or all_hold(scene.replace(TARGET, geom=moved[j], props=dict(props)), constraints, initial=scene)
        for j in range(len(moved))
    )


def satisfying_edits(
    scene: Scene, proposals: Iterable[list[dict]], allowed: tuple, constraints: list[dict], max_tries: int
) -> Iterator[tuple[dict, EditResult]]:
    """(edit, result) of the first `max_tries` proposals, in order, whose edit changes F0 and
    satisfies every constraint."""
    for chunk in _chunks(proposals, max_tries):
        for edit, res, sure in _results(scene, chunk, allowed, constraints):
            if res is None or not res.changed:
                continue
            if sure or all_hold(res.scene, constraints, initial=scene):
                yield edit, res
