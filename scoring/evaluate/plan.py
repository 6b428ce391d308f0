"""What a sweep runs: cities (benchmarks to build), participants (built-in agents and configured
models, each with the modalities it can read), tasks, and where everything is written."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.runner.config import ConfigError, EnvKeyProvider, ModelSpec, load_config
from scoring.vocab import BASE_MODALITIES, MODALITIES, TASKS, Modality

# What each built-in agent can read: `tools` and `centroid` compute from coordinates, so they
# need the GeoJSON (geojson, together); `chance` answers within the format in every modality.
AGENT_MODALITIES: dict[str, tuple[Modality, ...]] = {
    "tools": (Modality.GEOJSON, Modality.TOGETHER),
    "centroid": (Modality.GEOJSON, Modality.TOGETHER),
    "chance": MODALITIES,
    "blind": MODALITIES,  # the options-only baseline (scoring.runner.agents.blind)
}
DEFAULT_AGENTS = ("tools", "centroid", "chance", "blind")
DEFAULT_PER_RELATION = 25
_CITY_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_CITY_FIELDS = ("osm", "seed", "qa", "edit", "relations")


@dataclass(frozen=True)
class City:
    """One benchmark to build (or reuse): its extract, seed and counts, and its directory."""

    name: str
    root: Path  # holds bench/, runs/, results/
    osm: str | None = None  # None: the embedded Helsinki extract
    seed: int = 0
    n_qa: int = DEFAULT_PER_RELATION
    n_edit: int = DEFAULT_PER_RELATION
    relations: tuple[str, ...] | None = None
    protocol: str = "spatialgap"  # scoring.vocab.Protocol the benchmark is built under
    given: Path | None = None  # a pre-built benchmark or export (evaluate --bench): never built

    @property
    def bench(self) -> Path:
        return self.given or self.root / "bench"

    @property
    def results(self) -> Path:
        return self.root / "results"

    def run_dir(self, participant: str, modality: str, task: str) -> Path:
        return self.root / "runs" / participant / f"{modality}-{task}"


@dataclass(frozen=True)
class Participant:
    """A built-in agent (served on loopback by the sweep) or a configured model."""

    name: str
    modalities: tuple[str, ...]
    spec: ModelSpec | None = None  # None: the built-in agent `name`

    @property
    def is_agent(self) -> bool:
        return self.spec is None


@dataclass
class SweepPlan:
    out: Path
    cities: list[City]
    participants: list[Participant]
    modalities: tuple[str, ...] = BASE_MODALITIES
    tasks: tuple[str, ...] = TASKS
    jobs: int | None = None
    force: bool = False
    limit: int | None = None
    progress: bool = True
    agent_workers: int | None = None
    # Set when the plan has a single city: its files sit directly in OUT (what `make run` writes).
    single: bool = True
    notes: list[str] = field(default_factory=list)
    # an extractor model asked about the replies the rules leave unparsed (scoring.runner.extract)
    extractor: ModelSpec | None = None

    def modalities_of(self, p: Participant) -> tuple[str, ...]:
        return tuple(m for m in self.modalities if m in p.modalities)

    def wants_maps(self, city: City) -> bool:
        return any(Modality(m).has_image for p in self.participants for m in self.modalities_of(p))

    def map_sets(self) -> tuple[str, ...]:
        """The map-set modalities some participant runs (their maps are drawn after the others)."""
        return tuple(
            m
            for m in self.modalities
            if Modality(m).map_set and any(m in p.modalities for p in self.participants)
        )

    @property
    def report(self) -> Path:
        return self.out / "report.html"


def load_cities(path: Path, out: Path, seed: int, n_qa: int, n_edit: int) -> list[City]:
    """Cities of a TOML file: ``[cities.NAME]`` with ``osm`` (a path, relative to the file;
    omitted: the embedded Helsinki extract), and optionally ``seed``, ``qa``, ``edit`` (per
    relation) and ``relations`` (codes), defaulting to the command line's values."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: cities file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read cities file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    tables = data.get("cities")
    if not isinstance(tables, dict) or not tables:
        raise InputError(f"{path}: cities: no [cities.NAME] table")
    cities = []
    for name, t in tables.items():
        where = f"{path}: cities.{name}"
        if not isinstance(t, dict):
            raise InputError(f"{where}: must be a table")
        unknown = sorted(set(t) - set(_CITY_FIELDS))
        if unknown:
            raise InputError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(_CITY_FIELDS)})")
        osm = t.get("osm")
        if osm is not None:
            if not isinstance(osm, str):
                raise InputError(f"{where}.osm: expected a path")
            osm = str((path.parent / osm).resolve()) if not Path(osm).is_absolute() else osm
            if not Path(osm).is_file():
                raise InputError(f"{where}.osm: {osm}: no such file")
        rel = t.get("relations")
        if rel is not None and (not isinstance(rel, list) or not all(isinstance(r, str) for r in rel)):
            raise InputError(f"{where}.relations: expected a list of relation codes")
        cities.append(
            City(
                name=_city_name(name, where),
                root=out / name,
                osm=osm,
                seed=_int(t, "seed", seed, where, 0),
                n_qa=_int(t, "qa", n_qa, where, 0),
                n_edit=_int(t, "edit", n_edit, where, 0),
                relations=tuple(rel) if rel else None,
            )
        )
    return cities


def _int(t: dict[str, Any], key: str, default: int, where: str, lo: int) -> int:
    value = t.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise InputError(f"{where}.{key}: expected an integer >= {lo}, got {value!r}")
    return value


def _city_name(name: str, where: str) -> str:
    if not _CITY_NAME.match(name):
        raise InputError(f"{where}: a city name may hold letters, digits, '.', '_' and '-' only")
    return name


def cities_from_osm(
    osm: list[str], out: Path, city: str | None, seed: int, n_qa: int, n_edit: int
) -> tuple[list[City], bool]:
    """(cities, single): one per ``--osm`` file (named after the file), or the embedded city.
    A single city keeps its files directly in ``out``, as `make run` always has."""
    if len(osm) <= 1:
        return [City(city or "", out, osm[0] if osm else None, seed, n_qa, n_edit)], True
    if city:
        raise InputError("--city: names one city; with several --osm files each is named after its file")
    cities = []
    for path in osm:
        if not Path(path).is_file():
            raise InputError(f"--osm: {path}: no such file")
        name = Path(path).name.split(".")[0].lower()
        cities.append(City(_city_name(name, f"--osm {path}"), out / name, path, seed, n_qa, n_edit))
    names = [c.name for c in cities]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(f"--osm: two files give the city name {dup!r}; use a cities file (--cities)")
    return cities, False


def city_from_bench(bench: Path, out: Path) -> City:
    """The one city of a pre-built benchmark or export (`evaluate --bench DIR`): used as it is,
    no source extract needed; its runs and results go to `out`."""
    from scoring.formats.benchmark import load_manifest

    if not (bench / "manifest.json").is_file():
        raise InputError(f"--bench {bench}: no manifest.json (give a `spatialgap build` or `export` folder)")
    m, _ = load_manifest(bench)
    req = m.get("requested") or {}
    return City(
        str(m.get("city") or bench.name),
        out,
        seed=m.get("seed", 0),
        n_qa=req.get("qa_per_relation", DEFAULT_PER_RELATION),
        n_edit=req.get("edit_per_relation", DEFAULT_PER_RELATION),
        protocol=str(m.get("protocol") or "spatialgap"),
        given=bench.resolve(),
    )


def participants(
    agents: tuple[str, ...], config: Path | None, models: tuple[str, ...], check_keys: bool = True
) -> list[Participant]:
    """The built-in ``agents`` and the ``models`` of ``config`` (all of its models when none is
    named). Every configured model's key is read and checked now, before any work (unless
    ``check_keys`` is off: `--estimate` sends nothing)."""
    unknown = [a for a in agents if a not in AGENT_MODALITIES]
    if unknown:
        raise InputError(f"--agents: unknown {unknown[0]!r} (expected {', '.join(AGENT_MODALITIES)})")
    out = [Participant(a, AGENT_MODALITIES[a]) for a in agents]
    if models and config is None:
        raise InputError("--model: needs --config FILE (the models' endpoints are configured there)")
    if config is not None:
        specs = load_config(config)
        chosen = models or tuple(specs)
        missing = [m for m in chosen if m not in specs]
        if missing:
            raise ConfigError(
                f"{config}: models.{missing[0]}: no such model (have: {', '.join(sorted(specs))})"
            )
        keys = EnvKeyProvider()
        for name in chosen:
            if check_keys:
                keys.get_key(specs[name])  # one-line ConfigError naming the variable, never the value
            out.append(Participant(name, specs[name].modalities, specs[name]))
    names = [p.name for p in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(f"{dup!r} is both a built-in agent and a configured model; rename the model")
    if not out:
        raise InputError("nothing to run: give --agents and/or --config with --model")
    return out
