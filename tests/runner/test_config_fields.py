"""Every model config field is documented, and the README's table is the generated one."""

from dataclasses import fields
from pathlib import Path

from scoring.runner.config import ModelSpec
from scoring.runner.config_fields import BEGIN, END, FIELD_HELP, with_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_field_has_help():
    names = {f.name for f in fields(ModelSpec)} - {"name"} | {"omit"}
    assert set(FIELD_HELP) == names


def test_the_readme_table_is_current():
    text = README.read_text(encoding="utf-8")
    assert with_table(text) == text, "the README's config table is stale: run make config-table"
    # every field appears once as a row
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert all(block.count(f"| `{name}` |") == 1 for name in FIELD_HELP)
