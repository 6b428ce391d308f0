"""Keep i18n/*.ts in step with the plugin's tr("...") strings (no pylupdate5 needed).

    python tools/i18n.py update   # add new strings (unfinished), mark vanished ones obsolete
    python tools/i18n.py check    # exit 1 if a string lacks a finished translation

Every plugin string uses the single context "SpatialGap" (plugin/utils/i18n.py). An update edits the
file in place: existing translations, the file's language code, other contexts, locations and
comments stay as they are, and a file with nothing to change is not rewritten."""

from __future__ import annotations

import argparse
import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = "SpatialGap"
HEADER = b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n'
RETIRED = ("obsolete", "vanished")  # Qt's types for a message whose source is gone


def plugin_strings(root: Path = ROOT) -> list[str]:
    """Literal arguments of tr(...) calls in plugin/**/*.py, in first-seen order."""
    seen: dict[str, None] = {}
    for path in sorted((root / "plugin").rglob("*.py")):
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


def _parse(path: Path) -> ET.ElementTree:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    return ET.parse(path, parser)


def read_ts(path: Path) -> dict[str, tuple[str, str | None]]:
    """source -> (translation, type attribute) over the plugin's context."""
    out: dict[str, tuple[str, str | None]] = {}
    if not path.is_file():
        return out
    for msg in _context(_parse(path).getroot()).iter("message"):
        tr = msg.find("translation")
        out[msg.findtext("source") or ""] = (
            (tr.text or "") if tr is not None else "",
            tr.get("type") if tr is not None else "unfinished",
        )
    return out


def _context(root: ET.Element) -> ET.Element:
    for ctx in root.iter("context"):
        if ctx.findtext("name") == CONTEXT:
            return ctx
    ctx = ET.SubElement(root, "context")
    ET.SubElement(ctx, "name").text = CONTEXT
    return ctx


def update_ts(path: Path, lang: str, strings: list[str]) -> bool:
    """Bring one .ts file in step with `strings`; True when it was written."""
    if path.is_file():
        tree = _parse(path)
        root = tree.getroot()
        before = path.read_bytes()
    else:
        root = ET.Element("TS", version="2.1", language=lang)
        tree, before = ET.ElementTree(root), b""
    if not root.get("language"):  # an existing code (fr_FR, pt_BR ...) is the translator's
        root.set("language", lang)
    ctx = _context(root)
    messages = {msg.findtext("source") or "": msg for msg in ctx.findall("message")}
    wanted = set(strings)
    for src, msg in messages.items():
        translation = msg.find("translation")
        if translation is None:
            translation = ET.SubElement(msg, "translation", type="unfinished")
        kind = translation.get("type")
        if src not in wanted and kind not in RETIRED:
            translation.set("type", "obsolete")
        elif src in wanted and kind in RETIRED:  # back in use: its translation counts again
            if translation.text:
                del translation.attrib["type"]
            else:
                translation.set("type", "unfinished")
    for src in strings:
        if src not in messages:
            msg = ET.SubElement(ctx, "message")
            ET.SubElement(msg, "source").text = src
            ET.SubElement(msg, "translation", type="unfinished")
    ET.indent(tree, space="  ")
    data = HEADER + ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"
    if data == before:
        return False
    path.write_bytes(data)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="check", choices=("check", "update"))
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    strings = plugin_strings(args.root)
    bad = 0
    for ts in sorted((args.root / "i18n").glob("spatialgap_*.ts")):
        if args.command == "update":
            update_ts(ts, ts.stem.split("_", 1)[1], strings)
        old = read_ts(ts)
        missing = [s for s in strings if s not in old or not old[s][0] or old[s][1] is not None]
        for s in missing:
            print(f"{ts.name}: untranslated: {s!r}")
        bad += len(missing)
    return 1 if (args.command == "check" and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
