from tests.export.conftest import small_bench  # noqa: F401 - the same small benchmark, built once
