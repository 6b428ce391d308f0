"""Keep i18n/*.ts in step with the plugin's tr("...") strings (no pylupdate5 needed).

    python tools/i18n.py update   # add new strings (unfinished), mark vanished ones obsolete
    python tools/i18n.py check    # exit 1 if a string lacks a finished translation

Every plugin string uses the single context "SpatialGap" (plugin/i18n.py)."""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = "SpatialGap"


def plugin_strings() -> list[str]:
    """Literal arguments of tr(...) calls in plugin/*.py, in first-seen order."""
    seen: dict[str, None] = {}
    for path in sorted((ROOT / "plugin").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "tr"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                seen.setdefault(node.args[0].value, None)
    return list(seen)


def read_ts(path: Path) -> dict[str, tuple[str, str | None]]:
    """source -> (translation, type attribute)."""
    out = {}
    if not path.is_file():
        return out
    for msg in ET.parse(path).getroot().iter("message"):
        src = msg.findtext("source") or ""
        tr = msg.find("translation")
        out[src] = (
            (tr.text or "") if tr is not None else "",
            tr.get("type") if tr is not None else "unfinished",
        )
    return out


def write_ts(path: Path, lang: str, entries: list[tuple[str, str, str | None]]) -> None:
    root = ET.Element("TS", version="2.1", language=lang)
    ctx = ET.SubElement(root, "context")
    ET.SubElement(ctx, "name").text = CONTEXT
    for src, text, typ in entries:
        msg = ET.SubElement(ctx, "message")
        ET.SubElement(msg, "source").text = src
        t = ET.SubElement(msg, "translation")
        t.text = text
        if typ:
            t.set("type", typ)
    ET.indent(root)
    data = b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + ET.tostring(root, encoding="utf-8")
    path.write_bytes(data + b"\n")


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "check"
    strings = plugin_strings()
    bad = 0
    for ts in sorted((ROOT / "i18n").glob("spatialgap_*.ts")):
        lang = ts.stem.split("_", 1)[1]
        old = read_ts(ts)
        if cmd == "update":
            entries = [
                (s, old.get(s, ("", "unfinished"))[0], old.get(s, ("", "unfinished"))[1]) for s in strings
            ]
            entries += [(s, t, "obsolete") for s, (t, _) in old.items() if s not in strings and t]
            write_ts(ts, lang, entries)
        missing = [s for s in strings if s not in old or not old[s][0] or old[s][1] == "unfinished"]
        for s in missing:
            print(f"{ts.name}: untranslated: {s!r}")
        bad += len(missing)
    return 1 if (cmd == "check" and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
