"""Help links: the README's plugin section and the relation reference (anchored at a relation),
on the project's homepage from metadata.txt; the Help buttons of the dock, its dialogs and the
Processing algorithms use them."""

from __future__ import annotations

import configparser
import re
from functools import lru_cache
from pathlib import Path

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import QUrl
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import QDialogButtonBox, QPushButton

from ..utils.i18n import tr

PLUGIN_DIR = Path(__file__).resolve().parents[1]
FALLBACK_HOMEPAGE = "https://github.com/spatialgap/spatialgap"
PLUGIN_SECTION = "the-qgis-plugin"  # README.md "## The QGIS plugin"


@lru_cache(maxsize=1)
def homepage() -> str:
    """metadata.txt's homepage (beside the plugin in the zip, at the top of a checkout)."""
    for path in (PLUGIN_DIR / "metadata.txt", PLUGIN_DIR.parent / "metadata.txt"):
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(path, encoding="utf-8")
            url = parser.get("general", "homepage", fallback="").strip()
            if url:
                return url.rstrip("/")
    return FALLBACK_HOMEPAGE


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def readme_url(section: str = PLUGIN_SECTION) -> str:
    return f"{homepage()}#{section}"


def relation_url(code: str | None = None) -> str:
    """The relation reference, at this relation's entry when given."""
    url = f"{homepage()}/blob/HEAD/resources/relations.md"
    if not code:
        return url
    from ..gui.browser import relation_info

    return f"{url}#{slug(f'{code} {relation_info(code)[0]}')}"


def open_url(url: str) -> bool:
    """The shipped copy of a documentation page, at its section, in a QGIS window; a browser only
    for what the plugin does not ship."""
    from ..gui.docs import shipped_doc, show_doc

    local = shipped_doc(url, homepage())
    if local is not None:
        show_doc(*local, slug)
        return True
    return QDesktopServices.openUrl(QUrl(url))


def help_button(text: str, url_fn, parent=None) -> QPushButton:
    """A button opening url_fn() (called on click: the URL may depend on what is shown)."""
    button = QPushButton(text, parent)
    button.setToolTip(tr("Opens the documentation shipped with the plugin"))
    button.clicked.connect(lambda: open_url(url_fn()))
    return button


def add_help(buttons: QDialogButtonBox, url_fn=readme_url) -> None:
    """A Help button in a dialog's button box."""
    button = buttons.addButton(QDialogButtonBox.StandardButton.Help)
    # QGIS's own help icon: the style's standard one is missing without a desktop icon theme.
    button.setIcon(QgsApplication.getThemeIcon("/mActionHelpContents.svg"))
    buttons.helpRequested.connect(lambda: open_url(url_fn()))
