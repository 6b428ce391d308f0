"""Every measure of the registry documents itself with a runnable example (collected as a doctest
by `make test`, the way shapely documents its functions)."""

from __future__ import annotations

import doctest
import inspect

import pytest

from scoring import oracle


@pytest.mark.parametrize("name", list(oracle.MEASURES))
def test_a_measure_has_a_docstring_example_that_passes(name):
    fn = oracle.MEASURES[name].fn
    examples = doctest.DocTestParser().get_examples(inspect.getdoc(fn) or "")
    assert any(fn.__name__ + "(" in ex.source for ex in examples), f"{name}: no example calls it"
    test = doctest.DocTestFinder().find(fn, globs=vars(inspect.getmodule(fn)))[0]
    assert doctest.DocTestRunner().run(test).failed == 0
