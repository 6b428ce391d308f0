"""The plugin's Qt 6 / QGIS 4 readiness check, run by `make lint`.

The rules are those of the QGIS project's own migration script (scripts/pyqt5_to_pyqt6 in the
QGIS source repository, run in its QGIS-3-compatible mode). That script is not on PyPI and needs
an enum table only QGIS's repository ships, so we do not vendor it: this is our own equivalent,
reading the same things from the AST and finding unscoped enums by introspecting the installed
QGIS / PyQt5 (an enum member read as `Class.Member` that also exists as `Class.Enum.Member`).

    python tools/qt6_check.py [paths...]     (default: plugin/)

Exit status 1 and one `path:line: message` per finding when anything would break on Qt 6.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# QVariant's type constants are gone from PyQt6: allowed only in the shim choosing QMetaType.
QVARIANT_SHIM = "plugin/utils/compat.py"
QT_MODULES = ("qgis.core", "qgis.gui", "qgis.analysis")
RENAMED = {  # removed in Qt 6 (the QGIS script's deprecated_renamed_enums)
    ("Qt", "MidButton"): "Qt.MouseButton.MiddleButton",
    ("Qt", "TextColorRole"): "Qt.ItemDataRole.ForegroundRole",
    ("Qt", "BackgroundColorRole"): "Qt.ItemDataRole.BackgroundRole",
    ("QPainter", "HighQualityAntialiasing"): "QPainter.RenderHint.Antialiasing",
}
REMOVED_IMPORTS = {
    "QRegExp": "QRegExp is removed in Qt 6: use QRegularExpression",
    "qApp": "qApp is removed in Qt 6: use QApplication.instance()",
    "resources_rc": "compiled resources are removed in Qt 6: load files by path",
    "QDesktopWidget": "QDesktopWidget is removed in Qt 6: use QScreen",
}


def _imported_classes(tree: ast.Module) -> dict[str, object]:
    """Name -> class for what the file imports from QGIS and qgis.PyQt."""
    out: dict[str, object] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if node.module in QT_MODULES or node.module.startswith("qgis.PyQt."):
            try:
                module = importlib.import_module(node.module)
            except ImportError:
                continue
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if isinstance(obj, type):
                    out[alias.asname or alias.name] = obj
    return out


def _enum_scope(cls: object, member: str) -> str | None:
    """The enum's name when `cls.member` is an enum member reachable as `cls.Enum.member`."""
    try:
        value = getattr(cls, member)
    except Exception:  # any attribute lookup failure means: not an enum member we can judge
        return None
    if isinstance(value, type) or callable(value):
        return None
    enum_type = type(value)
    name = enum_type.__name__
    if name == member or name in ("int", "float", "str", "bool", "NoneType"):
        return None
    if getattr(cls, name, None) is enum_type:
        return name
    return None


def _call_findings(node: ast.Call) -> list[str]:
    out = []
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr == "exec_":
            out.append("exec_() is removed in Qt 6: use exec()")
        if func.attr == "addAction" and len(node.args) >= 4:
            out.append("fragile addAction(...) with 4+ arguments: create the QAction, then addAction it")
        if func.attr == "desktop" and not node.args:
            out.append("QApplication.desktop() is removed in Qt 6: use QScreen")
    if (
        isinstance(func, ast.Name)
        and func.id == "QVariant"
        and (not node.args or isinstance(node.args[0], ast.Attribute))
    ):
        out.append("a null QVariant: use qgis.core.NULL")
    if isinstance(func, ast.Name) and func.id == "QDateTime" and len(node.args) == 8:
        out.append("QDateTime(y, m, d, h, M, s, ms, ts): use QDateTime(QDate(...), QTime(...), ts)")
    return out


def _attribute_findings(node: ast.Attribute, classes: dict[str, object], rel: str) -> list[str]:
    out = []
    value = node.value
    if isinstance(value, ast.Call) and node.attr == "width":
        func = value.func
        if (isinstance(func, ast.Attribute) and func.attr == "fontMetrics") or (
            isinstance(func, ast.Name) and func.id in ("QFontMetrics", "QFontMetricsF")
        ):
            out.append("QFontMetrics.width() is removed in Qt 6: use horizontalAdvance()")
    if not isinstance(value, ast.Name):
        return out
    if value.id == "qApp":
        out.append(REMOVED_IMPORTS["qApp"])
    if value.id == "QVariant" and node.attr not in ("isNull",) and rel != QVARIANT_SHIM:
        out.append(f"QVariant.{node.attr}: fields take QMetaType on QGIS >= 3.38 (use plugin.utils.compat)")
    if (value.id, node.attr) in RENAMED:
        out.append(f"{value.id}.{node.attr} is removed in Qt 6: use {RENAMED[(value.id, node.attr)]}")
    elif value.id in classes:
        scope = _enum_scope(classes[value.id], node.attr)
        if scope is not None:
            out.append(f"unscoped enum {value.id}.{node.attr}: write {value.id}.{scope}.{node.attr}")
    return out


def check_file(path: Path) -> list[str]:
    rel = path.resolve().relative_to(ROOT).as_posix() if path.resolve().is_relative_to(ROOT) else str(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    classes = _imported_classes(tree)
    findings: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in ("PyQt5", "PyQt6", "PySide2", "PySide6"):
                findings.append((node.lineno, f"import from {node.module}: use qgis.PyQt"))
            if node.module == "qgis.PyQt.Qt":
                findings.append((node.lineno, "qgis.PyQt.Qt is gone: import Qt from qgis.PyQt.QtCore"))
            for alias in node.names:
                if alias.name in REMOVED_IMPORTS:
                    findings.append((node.lineno, REMOVED_IMPORTS[alias.name]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("PyQt5", "PyQt6"):
                    findings.append((node.lineno, f"import {alias.name}: use qgis.PyQt"))
        elif isinstance(node, ast.FunctionDef) and node.name == "exec_":
            findings.append((node.lineno, "def exec_ is removed in Qt 6: name it exec"))
        elif isinstance(node, ast.Call):
            findings += [(node.lineno, m) for m in _call_findings(node)]
        elif isinstance(node, ast.Attribute):
            findings += [(node.lineno, m) for m in _attribute_findings(node, classes, rel)]
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "activated"
            and isinstance(node.slice, ast.Name)
            and node.slice.id == "str"
        ):
            findings.append((node.lineno, "activated[str] is removed in Qt 6: use textActivated"))
    return [f"{rel}:{line}: {msg}" for line, msg in sorted(set(findings))]


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [ROOT / "plugin"]
    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py")))
    problems = [line for f in files for line in check_file(f)]
    for line in problems:
        print(line)
    print(f"qt6_check: {len(files)} files, {len(problems)} finding(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
