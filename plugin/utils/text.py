"""Text from elsewhere made fit for the analyst: a server's reply as short plain text (a proxy's
HTML error page is not rendered, nor shown as tags), verdict and run-state names translated."""

from __future__ import annotations

import html
import re
import textwrap
from html.parser import HTMLParser

from .i18n import tr

SERVER_TEXT_CHARS = 300  # a server's words in a label, a bar or a panel: the log keeps them whole
_TAG = re.compile(
    r"<\s*(!doctype|html|head|body|title|h[1-6]|p|div|center|hr|br|pre|span|a)\b", re.IGNORECASE
)


class _Text(HTMLParser):
    """The visible text of an HTML page as its pieces, each said once (a page's <title> is
    usually its <h1> again)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        piece = " ".join(data.split())
        if piece and not self._skip and piece not in self.pieces:
            self.pieces.append(piece)


def plain(text: str | None, limit: int = SERVER_TEXT_CHARS) -> str:
    """One line of plain text, at most `limit` characters: an HTML page becomes its visible text,
    entities are decoded, whitespace collapsed."""
    text = str(text or "")
    if _TAG.search(text):
        parser = _Text()
        try:
            parser.feed(text)
            parser.close()
            text = " ".join(parser.pieces)
        except (AssertionError, ValueError):  # a broken page: fall back to dropping the tags
            text = re.sub(r"<[^>]*>", " ", text)
    text = " ".join(html.unescape(text).split())
    return textwrap.shorten(text, limit, placeholder=" …") if len(text) > limit else text


def verdict_name(verdict: str | None) -> str:
    names = {
        "correct": tr("correct"),
        "wrong": tr("wrong"),
        "unparsed": tr("unparsed"),
        "error": tr("error"),
        "correct_refusal": tr("correct refusal"),
        "unfounded_answer": tr("unfounded answer"),
    }
    return names.get(str(verdict or ""), str(verdict or ""))


def state_name(state: str | None) -> str:
    names = {
        "complete": tr("complete"),
        "running": tr("running"),
        "aborted": tr("aborted"),
        "stopped": tr("stopped"),
        "interrupted": tr("interrupted"),
        "failed": tr("failed"),
        "unknown": tr("unknown"),
    }
    return names.get(str(state or ""), str(state or ""))


def _reasons() -> list[tuple[str, str]]:
    """(pattern of the scorer's English reason, its template in the plugin's language)."""
    return [
        (r"constraint (?P<n>\d+) fails: .*", tr("constraint {n} is broken (see #{n} below)")),
        (r"all (?P<n>\d+) constraints hold", tr("all {n} constraints hold")),
        (r"refused on an unanswerable instance", tr("refused on an unanswerable instance")),
        (r"answered an unanswerable instance", tr("answered an unanswerable instance")),
        (
            r"answered (?P<value>.+) on an unanswerable instance",
            tr("answered {value} on an unanswerable instance"),
        ),
        (r"edited an unanswerable instance", tr("edited an unanswerable instance")),
        (r"refusal", tr("refusal")),
        (r"within tolerance", tr("within tolerance")),
        (r"no change: the target is unchanged", tr("no change: the target is unchanged")),
        (r"empty prediction: no operations", tr("empty prediction: no operations")),
        (r"chose (?P<value>\S+), expected (?P<expected>\S+)", tr("chose {value}, expected {expected}")),
        (r"chose (?P<value>\S+)", tr("chose {value}")),
        (r"off by (?P<amount>.+)", tr("off by {amount}")),
        (r"expected (?P<value>.+)", tr("expected {value}")),
        (r"request failed: (?P<detail>.*)", tr("request failed: {detail}")),
        (r"invalid edit: (?P<detail>.*)", tr("invalid edit: {detail}")),
    ]


def reason_text(reason: str | None) -> str:
    """A verdict's reason in the plugin's language (the scorer writes English); one it does not
    know stays as written."""
    text = str(reason or "")
    for pattern, template in _reasons():
        m = re.fullmatch(pattern, text, re.S)
        if m:
            return template.format(**m.groupdict())
    return text
