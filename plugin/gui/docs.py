"""The documentation the plugin ships (README.md, resources/relations.md in the zip) shown in a
QGIS window at the section asked for: Help works offline and shows the version installed, not
whatever the project's homepage holds today."""

from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtGui import QTextCursor
from qgis.PyQt.QtWidgets import QDialog, QTextBrowser, QVBoxLayout

from ..utils.i18n import tr

PLUGIN_DIR = Path(__file__).resolve().parents[1]
_OPEN: list[DocViewer] = []  # open viewers (non-modal: kept referenced while shown)


def shipped_doc(url: str, homepage: str) -> tuple[Path, str] | None:
    """(the shipped file, the section's anchor) for a link into the project's documentation,
    None when that file is not shipped beside the plugin (or in the checkout)."""
    if not url.startswith(homepage):
        return None
    location, _, anchor = url[len(homepage) :].partition("#")
    relative = location.split("/blob/HEAD/", 1)[1] if "/blob/HEAD/" in location else "README.md"
    for root in (PLUGIN_DIR, PLUGIN_DIR.parent):
        if (root / relative).is_file():
            return root / relative, anchor
    return None


class DocViewer(QDialog):
    """A Markdown file rendered, scrolled to the heading whose anchor is `anchor`."""

    def __init__(self, path: Path, anchor: str, slug, parent=None):
        super().__init__(parent)
        self.setWindowTitle(tr("Spatial Gap help: {name}").format(name=path.name))
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(path.parent)])
        self.browser.setMarkdown(path.read_text(encoding="utf-8"))
        layout.addWidget(self.browser)
        self.resize(820, 640)
        self.heading = self._go_to(anchor, slug)

    def _go_to(self, anchor: str, slug) -> str:
        """Scroll to the heading of that anchor; its text ("" when none matches)."""
        block = self.browser.document().begin()
        while block.isValid():
            if block.blockFormat().headingLevel() > 0 and anchor and slug(block.text()) == anchor:
                self.browser.setTextCursor(QTextCursor(block))
                top = self.browser.document().documentLayout().blockBoundingRect(block).top()
                self.browser.verticalScrollBar().setValue(int(top))
                return block.text()
            block = block.next()
        return ""


def show_doc(path: Path, anchor: str, slug) -> DocViewer:
    viewer = DocViewer(path, anchor, slug)
    viewer.finished.connect(lambda _result: _OPEN.remove(viewer) if viewer in _OPEN else None)
    _OPEN.append(viewer)
    viewer.show()
    return viewer
