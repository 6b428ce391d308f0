"""A FRIEDA-format dataset from a local copy: the questions and the map image files they show.

Layout (FRIEDA's own: ``questions.json`` beside an ``imgs/`` folder; the Hugging Face copy's
``frieda_q_bank.json`` is read the same way)::

    DIR/questions.json | questions.jsonl | frieda_q_bank.json | the only *.json in DIR
    DIR/imgs/<document>/<image>.png     (or the images directly under DIR, or --images)

Each question is an object with FRIEDA's field names:

    question_ref          unique id ("q_0106")
    question_text         the question
    expected_answer       "40 m", "Zone A; Zone B" (parts split on ";") or a list of parts
    answer_type           textual | distance | cardinal
    spatial_relationship  Distance, Orientation, Within, ... (optional)
    map_count             Single | Multi (optional)
    images                the relevant maps, paths under the image folder
                          (also read: ``image_urls``, as in FRIEDA's result files)
    context_images        the document's other maps (also read: ``contextual_urls``; optional)

Settings: ``direct`` shows the relevant maps in their listed order; ``contextual`` shows every map
of the document (relevant and context, each once) in an order shuffled by a generator seeded with
``"<seed>:<question_ref>"``, so a question's order is the same on every run with the same seed and
independent of which other questions are run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.frieda.files import EXTRA_CATEGORIES
from scoring.frieda.rules import ANSWER_TYPES
from scoring.runner.images import image_media_type

DIRECT, CONTEXTUAL = "direct", "contextual"
SETTINGS = (DIRECT, CONTEXTUAL)
# FRIEDA's result files name the settings by their file-name suffix
SETTING_SUFFIX = {DIRECT: "wo_contextual", CONTEXTUAL: "w_contextual"}
QUESTION_FILES = ("questions.json", "questions.jsonl", "frieda_q_bank.json")
_IMAGE_KEYS = ("images", "image_urls")
_CONTEXT_KEYS = ("context_images", "contextual_urls")


@dataclass(frozen=True)
class Question:
    ref: str
    text: str
    expected: tuple[str, ...]
    answer_type: str
    relation: str | None
    map_count: str | None
    images: tuple[str, ...]
    context: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def maps(self, setting: str, seed: int) -> list[str]:
        """The maps shown in ``setting``, in the order they are sent."""
        if setting == DIRECT:
            return list(self.images)
        if setting != CONTEXTUAL:
            raise ValueError(f"unknown setting {setting!r} (expected {' or '.join(SETTINGS)})")
        every = list(dict.fromkeys([*self.images, *self.context]))
        random.Random(f"{seed}:{self.ref}").shuffle(every)
        return every

    def record(self) -> dict[str, Any]:
        """The question's fields in FRIEDA's result-record form (without a response)."""
        return {
            "question_ref": self.ref,
            "question_text": self.text,
            "expected_answer": list(self.expected),
            "answer_type": self.answer_type,
            "spatial_relationship": self.relation,
            "map_count": self.map_count,
            **self.extra,
        }


@dataclass(frozen=True)
class Dataset:
    source: Path
    image_root: Path
    questions: tuple[Question, ...]

    def image_path(self, name: str, where: str | None = None) -> Path:
        """The file of image ``name``; never outside the image folder. Errors name ``where``
        (default: the question file)."""
        where = where or str(self.source)
        if "\0" in name:
            raise InputError(f"{where}: image {_shown(name)!r}: a NUL byte in the name")
        try:
            root = self.image_root.resolve()
            path = (root / name).resolve()
        except (OSError, ValueError) as exc:  # a name too long, a symlink loop
            raise InputError(f"{where}: image {_shown(name)!r}: {_reason(exc)}") from None
        if root != path and root not in path.parents:
            raise InputError(f"{where}: image {_shown(name)!r} lies outside {self.image_root}")
        return path

    def check_image(self, name: str, where: str) -> None:
        """Image ``name`` is a file of a kind a request can carry (PNG, JPEG, GIF, WebP)."""
        path = self.image_path(name, where)
        try:
            with path.open("rb") as fh:
                head = fh.read(16)
        except FileNotFoundError:
            raise InputError(f"{where}: image {_shown(name)!r} not found under {self.image_root}") from None
        except OSError as exc:  # a directory, no permission, a name too long
            raise InputError(f"{where}: image {_shown(name)!r}: {_reason(exc)}") from None
        try:
            image_media_type(head)
        except ValueError as exc:
            raise InputError(f"{where}: image {_shown(name)!r}: {exc}") from None

    def read_image(self, name: str) -> bytes:
        try:
            return self.image_path(name).read_bytes()
        except OSError as exc:
            raise InputError(f"{self.image_root}: cannot read image {name!r} ({exc.strerror})") from None


def _question_file(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.is_dir():
        raise InputError(f"{path}: no such file or directory")
    for name in QUESTION_FILES:
        if (path / name).is_file():
            return path / name
    found = sorted(path.glob("*.json"))
    if len(found) == 1:
        return found[0]
    raise InputError(f"{path}: holds no {' / '.join(QUESTION_FILES)} (nor a single .json file)")


def _read_records(path: Path) -> list:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno})") from None
    if isinstance(data, dict) and isinstance(data.get("questions"), list):
        data = data["questions"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of FRIEDA questions")
    return data


def _names(rec: dict, keys: tuple[str, ...], where: str, required: bool) -> tuple[str, ...]:
    for key in keys:
        if key in rec and rec[key] is not None:
            value = rec[key]
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise InputError(f"{where}: {key} must be a list of image paths")
            if required and not value:
                raise InputError(f"{where}: {key} is empty")
            return tuple(value)
    if required:
        raise InputError(f"{where}: no {' / '.join(keys)}")
    return ()


def _question(rec: Any, where: str) -> Question:
    if not isinstance(rec, dict):
        raise InputError(f"{where}: a question must be an object")
    for key in ("question_ref", "question_text", "expected_answer", "answer_type"):
        if rec.get(key) in (None, ""):
            raise InputError(f"{where}: missing {key}")
    where = f"{where} ({rec['question_ref']})"
    exp = rec["expected_answer"]
    parts = exp.split(";") if isinstance(exp, str) else exp
    if not isinstance(parts, list):
        raise InputError(f"{where}: expected_answer must be a string or a list")
    expected = tuple(p for p in (str(p).strip() for p in parts) if p)
    if not expected:
        raise InputError(f"{where}: expected_answer is empty")
    if rec["answer_type"] not in ANSWER_TYPES:
        raise InputError(
            f"{where}: answer_type {rec['answer_type']!r} is not one of {', '.join(ANSWER_TYPES)}"
        )
    extra = {k: rec[k] for k in EXTRA_CATEGORIES if k in rec}  # tallied by frieda-score
    return Question(
        ref=str(rec["question_ref"]),
        text=str(rec["question_text"]),
        expected=expected,
        answer_type=str(rec["answer_type"]),
        relation=None if rec.get("spatial_relationship") is None else str(rec["spatial_relationship"]),
        map_count=None if rec.get("map_count") is None else str(rec["map_count"]),
        images=_names(rec, _IMAGE_KEYS, where, required=True),
        context=_names(rec, _CONTEXT_KEYS, where, required=False),
        extra=extra,
    )


def load_dataset(path: str | Path, images: str | Path | None = None) -> Dataset:
    """Read and check a FRIEDA-format dataset: every question well formed, ids unique, every image
    file present (so that a run fails before sending anything, never half-way)."""
    path = Path(path)
    qfile = _question_file(path)
    base = path if path.is_dir() else qfile.parent
    if images is not None:
        root = Path(images)
    else:
        root = base / "imgs" if (base / "imgs").is_dir() else base
    if not root.is_dir():
        raise InputError(f"{root}: image folder not found")
    questions = tuple(
        _question(rec, f"{qfile}: question {i + 1}") for i, rec in enumerate(_read_records(qfile))
    )
    if not questions:
        raise InputError(f"{qfile}: holds no questions")
    seen: set[str] = set()
    for q in questions:
        if q.ref in seen:
            raise InputError(f"{qfile}: question_ref {q.ref!r} occurs twice")
        seen.add(q.ref)
    ds = Dataset(qfile, root, questions)
    for q in questions:
        for name in dict.fromkeys((*q.images, *q.context)):
            ds.check_image(name, f"{qfile}: question {q.ref}")
    return ds


def _shown(name: str, limit: int = 120) -> str:
    """An image name as an error quotes it (a 5,000-character one by its ends)."""
    return name if len(name) <= limit else f"{name[: limit // 2]}...{name[-(limit // 2) :]}"


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
