"""The reply reader reads the end of a long reply (issue 27, item 14): the cut that keeps its
last MAX_CHARS characters (RAW_CAP of the raw reply, EDIT_CAP for edits) must never split a
number, an id or a word. Before, "1234.5 m" at the cut was read as 34.5 m, and "F0/F9" as a
bearing of 9°. Each case places the cut inside the token, at every offset of it."""

from __future__ import annotations

import pytest

from scoring.answers import MAX_CHARS, RAW_CAP, parse_answer
from scoring.answers.base import to_text

FILLER = " that is all."


def at_cut(head: str, rest: str, limit: int = MAX_CHARS) -> str:
    """``head + rest + filler`` whose last ``limit`` characters begin exactly at ``rest``; it ends
    on a full stop, as a finished reply does (one cut mid-sentence has no answer)."""
    pad = FILLER * ((limit - len(rest)) // len(FILLER) + 1)
    return head + (rest + pad)[: limit - 1] + "."


@pytest.mark.parametrize("split", range(1, len("1234.5")))
def test_a_number_at_the_cut_is_read_whole(split):
    number = "1234.5"
    reply = at_cut(f"I measured it carefully. The distance is {number[:split]}", f"{number[split:]} m.")
    assert reply[-MAX_CHARS:].startswith(number[split:])  # the cut is inside the number
    got = parse_answer(reply, "distance")
    assert got.ok and got.value == 1234.5, got


def test_an_id_at_the_cut_is_read_whole():
    reply = at_cut("Compared with F0, the nearest feature is F", "9.")
    got = parse_answer(reply, "feature_id", valid_ids=["F0", "F9"])
    assert got.ok and got.value == "F9", got


def test_ids_at_the_cut_are_no_bearing():
    # only ids near the cut: before, "F0/F" was cut off and the 9 read as a bearing of 9°
    reply = at_cut("I compared the bearings of F0/F", "9 and could not decide")
    got = parse_answer(reply, "bearing")
    assert not (got.ok and got.value == 9.0), got


def test_raw_bytes_cut_inside_a_character_and_a_word_start_at_white_space():
    # RAW_CAP * 4 bytes are kept of a bytes reply: here the cut falls inside "é" of "café"
    kept = b"\xa9s 12" + b" answer: 12 m" * (RAW_CAP * 4 // 13)
    kept += b" " * (RAW_CAP * 4 - len(kept))
    text = to_text(b"a word about the caf\xc3" + kept)
    assert text is not None and "\ufffd" not in text and text.startswith(" 12 answer: 12 m")


def test_a_token_longer_than_the_step_back_is_dropped_not_cut():
    from scoring.answers.base import MAX_TOKEN, tail

    token = "7" * (MAX_TOKEN + 10)
    text = "start " + token + " end"
    cut = tail(text, len(" end") + 5)  # the cut falls 5 characters inside the long token
    assert cut == "end"  # dropped whole: no 77777 read from its end
    assert tail("a b", 10) == "a b" and tail("abc def", 3) == "def" and tail("abc def", 4) == " def"
    assert tail("abcdef", 3) == "abcdef"  # one token only: read whole
