"""Build the installable plugin zip: one top folder `spatialgap/` holding the plugin, the
scoring package, resources/ (beside scoring/, where scoring.paths looks), compiled translations,
metadata.txt and LICENSE; then check it against the plugins.qgis.org validator's rules.

    python tools/make_zip.py [--out dist/spatialgap.zip]
"""

from __future__ import annotations

import argparse
import configparser
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = "spatialgap"
REQUIRED_METADATA = (
    "name",
    "description",
    "about",
    "version",
    "qgisMinimumVersion",
    "author",
    "email",
    "tracker",
    "repository",
)
SKIP_PARTS = {"__pycache__", ".git", ".pytest_cache", "__MACOSX", "tests", "bench", "perf"}
# Benchmarking / performance scaffolding and test servers: development tools, never shipped.
SCAFFOLDING = re.compile(r"(^|_)bench(_|$)|perf|fakeserver|^test_|^conftest$")
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # reproducible archives


def compiled_translations() -> list[Path]:
    """i18n/*.qm, compiled from the .ts sources first when lrelease is available (so the zip can
    never ship translations older than their sources)."""
    if shutil.which("lrelease"):
        for ts in sorted((ROOT / "i18n").glob("*.ts")):
            subprocess.run(["lrelease", "-silent", str(ts), "-qm", str(ts.with_suffix(".qm"))], check=True)
    qms = sorted((ROOT / "i18n").glob("*.qm"))
    if not qms:
        raise SystemExit(
            "no compiled translations in i18n/ and no lrelease to make them (apt install "
            "qttools5-dev-tools)"
        )
    return qms


def is_excluded(name: str) -> bool:
    """Build products, version-control files, tests and development scaffolding."""
    parts = name.split("/")
    if SKIP_PARTS & set(parts) or name.endswith((".pyc", ".pyo")):
        return True
    return name.endswith(".py") and SCAFFOLDING.search(parts[-1][: -len(".py")]) is not None


def members() -> list[tuple[Path, str]]:
    out = []

    def add_tree(src: Path, dest: str, pattern: str = "*"):
        for p in sorted(src.rglob(pattern)):
            if p.is_file() and not is_excluded(p.relative_to(src).as_posix()):
                out.append((p, f"{TOP}/{dest}/{p.relative_to(src).as_posix()}".replace("//", "/")))

    add_tree(ROOT / "plugin", "", "*.py")
    add_tree(ROOT / "scoring", "scoring")
    add_tree(ROOT / "resources", "resources")
    qms = compiled_translations()
    for p in qms + sorted((ROOT / "i18n").glob("*.ts")):
        out.append((p, f"{TOP}/i18n/{p.name}"))
    for name in ("metadata.txt", "LICENSE", "README.md"):
        out.append((ROOT / name, f"{TOP}/{name}"))
    return out


def validate(zip_path: Path) -> list[str]:
    """The plugins.qgis.org upload checks that apply to an archive (empty list: valid)."""
    errors = []
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        tops = {n.split("/", 1)[0] for n in names}
        if len(tops) != 1:
            errors.append(f"the zip must hold exactly one top folder, found {sorted(tops)}")
        top = next(iter(tops))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", top):
            errors.append(f"top folder {top!r} is not a valid Python identifier")
        for bad in (n for n in names if is_excluded(n.split("/", 1)[-1])):
            errors.append(f"forbidden member {bad}")
        if f"{top}/__init__.py" not in names:
            errors.append("no __init__.py in the top folder")
        if f"{top}/LICENSE" not in names:
            errors.append("no LICENSE file")
        if f"{top}/metadata.txt" not in names:
            return errors + ["no metadata.txt"]
        cp = configparser.ConfigParser(interpolation=None)
        cp.read_string(zf.read(f"{top}/metadata.txt").decode("utf-8"))
        meta = dict(cp["general"]) if cp.has_section("general") else {}
        meta = {k.lower(): v for k, v in meta.items()}
        for key in REQUIRED_METADATA:
            if not meta.get(key.lower(), "").strip():
                errors.append(f"metadata.txt: missing {key}")
        if not re.fullmatch(r"\d+\.\d+(\.\d+)?", meta.get("version", "")):
            errors.append("metadata.txt: version must look like 1.2.3")
        if not re.fullmatch(r"3\.\d+(\.\d+)?", meta.get("qgisminimumversion", "")):
            errors.append("metadata.txt: qgisMinimumVersion must be 3.x")
        if "@" not in meta.get("email", ""):
            errors.append("metadata.txt: email is not an address")
        for key in ("tracker", "repository"):
            if not meta.get(key, "").startswith(("http://", "https://")):
                errors.append(f"metadata.txt: {key} must be a URL")
        icon = meta.get("icon")
        if icon and f"{top}/{icon}" not in names:
            errors.append(f"metadata.txt: icon {icon} is not in the zip")
        if "<" in meta.get("about", "") or "<" in meta.get("description", ""):
            errors.append("metadata.txt: no HTML in about/description")
    return errors


def build(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for src, arc in members():
            info = zipfile.ZipInfo(arc, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, src.read_bytes())
    tmp.replace(out)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "dist" / "spatialgap.zip"))
    args = ap.parse_args(argv)
    out = build(Path(args.out))
    errors = validate(out)
    for e in errors:
        print(f"invalid: {e}", file=sys.stderr)
    if errors:
        return 1
    with zipfile.ZipFile(out) as zf:
        n = len(zf.namelist())
    print(f"{out}: {n} files, {out.stat().st_size / 1e6:.1f} MB, valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
