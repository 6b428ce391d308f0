"""The README's "How replies are read" examples run as doctests: the documented behaviour is
the reader's."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_reading_examples_of_the_readme_hold():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## How replies are read") : text.index("## FRIEDA-style free-form answers")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    # the blocks read as one session: the first one's import serves the rest
    runner.run(parser.get_doctest("\n".join(blocks), {}, "README reading examples", str(README), 0))
    assert runner.summarize(verbose=False).failed == 0
