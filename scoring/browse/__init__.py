"""Stage: scored results -> a per-sample browser (browser.html, beside report.html).

One self-contained HTML file (the maps linked by relative path, not embedded: a sweep has
thousands) showing every sample: question, map (an edit's reference and reply drawn on it),
reply, reading, verdict and reason, tokens and latency; filterable by model, input type, task,
family, relation, verdict and city. Its address keeps the filters and the chosen sample
(``browser.html#model=M&modality=image&form=open&relation=M01&verdict=wrong``), so report cells
link to their samples.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from scoring.errors import InputError, OutputError
from scoring.paths import RESOURCES_DIR
from scoring.support.files import write_atomic

__all__ = ["browser_link", "write_browser"]
BROWSER_NAME = "browser.html"


def browser_link(**filters: str | None) -> str:
    """The browser's address for the samples of one report cell.

    >>> browser_link(model="tools", modality="image", form="open", relation=None)
    'browser.html#model=tools&modality=image&form=open'
    """
    return BROWSER_NAME + "#" + urlencode({k: v for k, v in filters.items() if v})


def render_browser(samples: list[dict[str, Any]], *, report: str | None) -> str:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(RESOURCES_DIR / "report")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    # inside <script> entities are not decoded: escape only what could end the element
    data = json.dumps(samples, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return env.get_template("browser.html.j2").render(data=Markup(data), n=len(samples), report=report)


def write_browser(
    results_dirs: Sequence[str | Path], out_html: str | Path, *, report_name: str | None = None
) -> Path:
    """Write the sample browser of one or more RESULTS directories to ``out_html``, linking
    ``report_name`` (default: report.html beside it, if it exists by then)."""
    from scoring.browse.samples import collect_samples

    if not results_dirs:
        raise InputError("no results directory given")
    out = Path(out_html)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out.parent}: cannot create ({exc.strerror})") from None
    samples = collect_samples(list(results_dirs), out.parent.resolve())
    report = out.with_name("report.html")
    if report_name is None and report.is_file():
        report_name = os.path.basename(report)
    html = render_browser(samples, report=report_name)
    write_atomic(out, html)
    return out


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "browse",
        help="write the per-sample browser (browser.html) of scored results",
        description="One HTML file showing every scored sample (question, map, reply, reading, verdict, "
        "tokens, latency), filterable; written beside report.html by evaluate and report.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results directories (spatialgap score)")
    p.add_argument("--out", default=BROWSER_NAME, help="the HTML file to write")
    p.set_defaults(func=_cli)


def _cli(args: Any) -> int:
    print(write_browser(args.results, args.out))
    return 0
