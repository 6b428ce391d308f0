"""The inspect_ai tasks under the distribution's name (scoring.adapters.inspect_task builds them):

inspect eval spatialgap/qa -T bench=BENCH -T modality=image -T form=mcq --model ...
inspect eval spatialgap/edit -T bench=BENCH -T modality=geojson --model ...
"""

from __future__ import annotations

from inspect_ai import Task, task

from scoring.adapters.inspect_task import make_task
from scoring.adapters.turns import IMAGE_DETAIL


@task
def qa(
    bench: str,
    modality: str = "geojson",
    form: str = "open",
    limit: int | None = None,
    max_tokens: int = 1024,
    image_detail: str = IMAGE_DETAIL,
) -> Task:
    """Question answering in one input type and form (open or mcq)."""
    return make_task(bench, "qa", modality, form, limit, max_tokens, image_detail)


@task
def edit(
    bench: str,
    modality: str = "geojson",
    limit: int | None = None,
    max_tokens: int = 1024,
    image_detail: str = IMAGE_DETAIL,
) -> Task:
    """Map editing in one input type, with run's corrective turn for an unusable reply."""
    return make_task(bench, "edit", modality, "edit", limit, max_tokens, image_detail)


@task
def spatialgap(
    bench: str,
    task: str = "qa",
    modality: str = "geojson",
    form: str = "open",
    limit: int | None = None,
    max_tokens: int = 1024,
    image_detail: str = IMAGE_DETAIL,
) -> Task:
    """Any task, form and input type (scoring.adapters.inspect_task.spatialgap)."""
    return make_task(bench, task, modality, form, limit, max_tokens, image_detail)
