"""Options that give nothing away: the option rules draw the right option's rank uniformly and
symmetrically, and the options-only learner (the `blind` baseline) finds a leak when there is one
and stays at guessing when there is none; the build report and the release gate state it."""

from __future__ import annotations

import collections
import itertools
import json
import random

import pytest

from scoring.build.blind import (
    BLIND_MARGIN,
    cross_fitted,
    examples_of,
    failing,
    figures,
    fit,
    manifest_record,
    overall,
    report_lines,
    train_test,
)
from scoring.build.blind_features import OptionsItem, option_features, question_key
from scoring.relations.base import LETTERS, mcq, numeric_distractors, shuffle_options
from scoring.relations.options import (
    bearing_options,
    count_distractors,
    direction_distractors,
    ordering_distractors,
    point_grid,
)
from scoring.relations.paper import interval_choices
from scoring.score.gate import options_only_check
from scoring.vocab import AnswerType

COMPASS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def _instances(make, n: int, seed: int, relation: str = "X01") -> list[dict]:
    """n instances whose (choices, letter) `make(rng)` draws."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        choices, letter = make(rng)
        out.append(
            {
                "id": f"c-qa-{relation}-{k:03d}",
                "relation": relation,
                "question": "How far is F1 from F0, in metres?",
                "choices": choices,
                "correct_choice": letter,
            }
        )
    return out


def _points(rng: random.Random) -> tuple[list[str], str]:
    value = math_exp_uniform(rng, 5.0, 400.0)
    return mcq(rng, f"{value:.1f} m", numeric_distractors(rng, value, " m", 1))


def math_exp_uniform(rng: random.Random, lo: float, hi: float) -> float:
    import math

    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _leaky(rng: random.Random) -> tuple[list[str], str]:
    """The old rule: fixed factors of the answer (0.5, 0.65, 0.8, 1.25 ...)."""
    value = math_exp_uniform(rng, 5.0, 400.0)
    factors = rng.sample([0.5, 0.65, 0.8, 1.25, 1.5, 1.8, 2.2], 3)
    return mcq(rng, f"{value:.1f} m", [f"{value * f:.1f} m" for f in factors])


def test_blind_learner_solves_options_built_from_fixed_factors():
    figs = train_test(_instances(_leaky, 300, 1), _instances(_leaky, 300, 2))
    assert overall(figs).accuracy > 0.45


def test_blind_learner_stays_at_guessing_on_exchangeable_point_options():
    figs = train_test(_instances(_points, 400, 1), _instances(_points, 400, 2))
    assert overall(figs).excess < BLIND_MARGIN


def test_point_options_put_the_answer_at_every_rank_equally():
    rng = random.Random(0)
    ranks = collections.Counter()
    for _ in range(4000):
        v = math_exp_uniform(rng, 20.0, 200.0)
        opts = [v, *point_grid(rng, v, 0.5)]
        ranks[sorted(opts).index(v)] += 1
    assert all(abs(ranks[r] / 4000 - 0.25) < 0.04 for r in range(4)), ranks


def test_point_options_are_distinct_and_apart():
    rng = random.Random(1)
    for _ in range(500):
        v = math_exp_uniform(rng, 3.0, 5000.0)
        opts = sorted([v, *point_grid(rng, v, 0.5)])
        assert all(b >= a * 1.099 and b - a >= 0.5 for a, b in itertools.pairwise(opts))


def test_bearing_options_are_equally_spaced_with_the_answer_at_a_uniform_rank():
    rng = random.Random(2)
    ranks = collections.Counter()
    for _ in range(2000):
        opts, k = bearing_options(rng, rng.uniform(0, 360))
        steps = {round((float(b[:-1]) - float(a[:-1])) % 360, 1) for a, b in itertools.pairwise(opts)}
        assert len(steps) == 1
        ranks[k] += 1
    assert all(abs(ranks[r] / 2000 - 0.25) < 0.04 for r in range(4))


def test_no_compass_option_is_marked_by_having_both_neighbours_offered():
    rng = random.Random(3)
    right_with_both = offered_with_both = 0
    for _ in range(3000):
        answer = rng.choice(COMPASS)
        opts = [answer, *direction_distractors(rng, answer, COMPASS)]
        for o in opts:
            i = COMPASS.index(o)
            if COMPASS[(i - 1) % 8] in opts and COMPASS[(i + 1) % 8] in opts:
                offered_with_both += 1
                right_with_both += o == answer
    assert abs(right_with_both / offered_with_both - 0.25) < 0.04


def test_every_ordering_option_has_its_reverse_and_a_one_swap_neighbour_offered():
    rng = random.Random(4)
    for n in (3, 4, 5):
        answer = [f"F{i}" for i in range(1, n + 1)]
        rng.shuffle(answer)
        opts = [answer, *ordering_distractors(rng, answer)]
        assert len({tuple(o) for o in opts}) == 4
        for o in opts:
            assert o[::-1] in opts
            assert any(sum(a != b for a, b in zip(o, p, strict=True)) == 2 for p in opts if p != o)


def test_count_distractors_are_drawn_from_the_whole_range():
    rng = random.Random(5)
    seen = collections.Counter(v for _ in range(700) for v in count_distractors(rng, 0, 6))
    assert set(seen) == {"1", "2", "3", "4", "5", "6"}


@pytest.mark.parametrize("answer_type", [AnswerType.DISTANCE, AnswerType.PERIMETER, AnswerType.DENSITY])
def test_interval_start_and_width_do_not_tell_which_interval_holds_the_value(answer_type):
    rng = random.Random(6)
    starts: dict[int, list[float]] = collections.defaultdict(list)
    for _ in range(3000):
        v = math_exp_uniform(rng, 100.0, 2000.0)
        made = interval_choices(rng, v, answer_type)
        assert made is not None
        opts, letter, edge = made
        lo = [float(o.split()[1]) for o in opts]
        width = lo[1] - lo[0]
        k = LETTERS.index(letter)
        assert lo[k] <= v < lo[k] + width and edge > 0
        starts[k].append(lo[0] / width)
    means = [sum(s) / len(s) for s in starts.values()]
    assert max(means) - min(means) < 0.3  # the first interval's start, in widths, alike for every k


def test_a_value_too_small_for_fair_intervals_keeps_its_point_options():
    assert interval_choices(random.Random(0), 40.0, AnswerType.DISTANCE) is None


def test_shuffled_options_keep_the_right_one_and_clockwise_bearings_keep_their_order():
    inst = {"choices": ["a", "b", "c", "d"], "correct_choice": "C", "answer_type": "distance"}
    out = shuffle_options(dict(inst), random.Random(7))
    assert out["choices"][LETTERS.index(out["correct_choice"])] == "c"
    bearing = {
        "choices": ["1.0°", "16.0°", "31.0°", "46.0°"],
        "correct_choice": "B",
        "answer_type": "bearing",
    }
    assert shuffle_options(dict(bearing), random.Random(7))["choices"] == bearing["choices"]


def test_option_features_are_one_row_per_option_of_equal_width():
    for choices in (["F1", "F2", "F3", "F4"], ["yes", "no"], ["12.0 m", "15.5 m", "20.0 m", "9.0 m"]):
        x = option_features(OptionsItem(question_key("Which of F1, F2 is 12 m away?"), tuple(choices)))
        assert x.shape[0] == len(choices)
    assert question_key("Is F12 within 63 m of F0?") == "Is F within # m of F?"


def test_a_relation_above_guessing_by_the_margin_fails_the_gate_and_shows_in_the_build_report():
    leaky = _instances(_leaky, 120, 8, "M01")
    fair = _instances(_points, 120, 9, "M02")
    record = manifest_record(cross_fitted(leaky + fair))
    complaints = failing(figures(*_examples_and_choices(record)))
    assert any(c.startswith("M01") for c in complaints)
    assert not any(c.startswith("M02") for c in complaints)
    check = options_only_check({"benchmark": {"options_only": json.loads(json.dumps(record))}})
    assert check is not None and not check["passed"] and "M01" in check["why"]
    text = "\n".join(report_lines(record))
    assert "## Options-only baseline" in text and "| M01 |" in text and "⚠" in text


def _examples_and_choices(record: dict):
    """(examples, chosen) reproducing the record's counts (what `failing` reads of figures)."""
    from scoring.build.blind import Example

    ex, chosen = [], []
    for r in record["relations"]:
        for i in range(r["items"]):
            ex.append(Example(OptionsItem("k", ("a", "b", "c", "d")), 0, r["relation"]))
            chosen.append(0 if i < r["correct"] else 1)
    return ex, chosen


def test_a_benchmark_built_before_the_baseline_has_no_options_only_check():
    assert options_only_check({"benchmark": {}}) is None


def test_fitted_model_picks_an_option_of_the_item():
    model = fit(examples_of(_instances(_leaky, 60, 10)))
    item = OptionsItem(
        question_key("How far is F1 from F0, in metres?"), ("1.0 m", "2.0 m", "3.0 m", "4.0 m")
    )
    assert 0 <= model.choose(item) < 4
