"""Translation: one context for every plugin string, a translator chosen from the QGIS locale."""

from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import QCoreApplication, QLocale, QSettings, QTranslator

CONTEXT = "SpatialGap"
PLUGIN_DIR = Path(__file__).resolve().parents[1]
_LANG = {"lang": "en"}  # the language of the installed translation: numbers follow it


def language() -> str:
    """The language of the installed translation ("en" without one)."""
    return _LANG["lang"]


def number(value, decimals: int | None = None) -> str:
    """A number in the plugin's language: "1,545" / "120.00" in English, "1 545" / "120,00" in
    French (the UI's sentences and its numbers in one language)."""
    locale = QLocale(_LANG["lang"])
    if decimals is None and isinstance(value, int):
        return locale.toString(int(value))
    return locale.toString(float(value), "f", 2 if decimals is None else decimals)


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def qgis_locale() -> str:
    """The two-letter language QGIS runs in: `qgis --lang fr` first (QgsApplication's
    translation, set from --lang or else from QGIS's own setting), then QGIS's setting, then
    the system's."""
    try:
        from qgis.core import QgsApplication

        app = QgsApplication.instance()
        # translation(): an instance method on 3.22 and 3.40 alike; empty when QGIS chose none.
        chosen = app.translation() if isinstance(app, QgsApplication) else ""
        if chosen:
            return chosen[:2]
        loc = QgsApplication.locale()
        if loc:
            return loc[:2]
    except (ImportError, AttributeError):
        pass
    s = QSettings()
    if s.value("locale/overrideFlag", False, type=bool):
        return (s.value("locale/userLocale", "") or "en")[:2]
    return QLocale.system().name()[:2]


def qm_path(lang: str, dirs=None) -> Path | None:
    """The compiled translation: beside the plugin (zip) or in the checkout's i18n/."""
    for d in dirs or (PLUGIN_DIR / "i18n", PLUGIN_DIR.parent / "i18n"):
        d = Path(d)
        p = d / f"spatialgap_{lang}.qm"
        if p.is_file():
            return p
    return None


def install_translator(lang: str | None = None, dirs=None) -> QTranslator | None:
    """Load and install the translation for `lang` (default: the QGIS locale); None for English
    or when no translation exists."""
    lang = lang or qgis_locale()
    path = qm_path(lang, dirs)
    if lang == "en" or path is None:
        _LANG["lang"] = "en"
        return None
    translator = QTranslator()
    if not translator.load(str(path)):
        return None
    QCoreApplication.installTranslator(translator)
    _LANG["lang"] = lang
    return translator
