"""The plugin's icon, shared by the plugin object and the Processing provider."""

from __future__ import annotations

from qgis.PyQt.QtGui import QIcon

from ..utils.i18n import PLUGIN_DIR

# In the zip the resources sit beside the plugin modules; in a checkout, one level up.
_ICON_PATHS = (
    PLUGIN_DIR / "resources" / "icons" / "spatialgap.svg",
    PLUGIN_DIR.parent / "resources" / "icons" / "spatialgap.svg",
)


def icon() -> QIcon:
    for path in _ICON_PATHS:
        if path.is_file():
            return QIcon(str(path))
    return QIcon()
