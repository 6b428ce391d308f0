"""A benchmark directory written by `spatialgap build`, read once into a value every later stage
(render, run, score, evaluate, the QGIS plugin) shares, so they agree on what a valid benchmark is.

    <bench>/manifest.json     build record (CRS, counts, SHA-256 of every file)
    <bench>/qa.jsonl          one QA instance per line
    <bench>/edit.jsonl        one editing instance per line
    <bench>/context.geojsonl  the city's real OSM context, for maps
    <bench>/maps/             rendered maps and their sidecars

An exported dataset (scoring/formats/exported.py) opens the same way: its data/<task>.parquet
or .jsonl rows give back the very instances, beside the same manifest and maps.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from scoring.errors import InputError
from scoring.formats.exported import exported_file, iter_exported, restore_maps
from scoring.formats.records import Instance
from scoring.support.files import read_jsonl, sha256_file
from scoring.vocab import Modality, ReplyForm, Task

TASK_FILES: dict[Task, str] = {Task.QA: "qa.jsonl", Task.EDIT: "edit.jsonl"}
# A build's seconds (extract, shards), beside the manifest and outside its bytes: the manifest is
# the benchmark's identity, the same for every build of the same request on any machine.
TIMING = "timing.json"


def load_manifest(bench_dir: str | Path) -> tuple[dict, str]:
    """(manifest, SHA-256 of its bytes: the benchmark's identity recorded by runs)."""
    bench = Path(bench_dir)
    if not bench.is_dir():
        raise InputError(f"benchmark directory not found: {bench}")
    mpath = bench / "manifest.json"
    if not mpath.is_file():
        raise InputError(f"{bench}: not a benchmark directory (no manifest.json)")
    raw = mpath.read_bytes()
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise InputError(f"{mpath}: not valid JSON") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{mpath}: not a benchmark manifest (expected a JSON object)")
    return manifest, hashlib.sha256(raw).hexdigest()


def manifest_with_timing(bench_dir: str | Path) -> dict:
    """The manifest with the build's seconds (timing.json) back in it, as builds before this
    file recorded them: ``timing`` and each build report's ``seconds`` (performance scripts)."""
    manifest, _ = load_manifest(bench_dir)
    try:
        timing = json.loads((Path(bench_dir) / TIMING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return manifest
    shards = {(t.get("relation"), t.get("task")): t.get("seconds") for t in timing.pop("shards", [])}
    for r in manifest.get("build_report", []):
        r.setdefault("seconds", shards.get((r.get("relation"), r.get("task"))))
    manifest.setdefault("timing", timing)
    return manifest


def _is_instance(value: Any) -> TypeGuard[Instance]:
    """What a reader checks before handing a row on as an instance (the schema's other fields are
    the builder's promise, checked against the manifest's hashes)."""
    return isinstance(value, dict) and isinstance(value.get("id"), str) and "scene" in value


def iter_instances(bench_dir: str | Path, tasks: Iterable[str] = tuple(TASK_FILES)) -> Iterator[Instance]:
    """Instances of the given tasks in file order. A task file that is absent yields nothing; an
    instance without a string id or a scene, or a repeated id, is an InputError naming the line."""
    bench = Path(bench_dir)
    seen: set[str] = set()
    for task in tasks:
        path = bench / TASK_FILES[Task(task)]
        if not path.is_file():
            # an exported dataset (spatialgap export) holds its instances in data/<task>.*
            exported = exported_file(bench, task)
            if exported is None:
                continue
            path, rows = exported, iter_exported(exported)
        else:
            rows = read_jsonl(path)
        for n, inst in rows:
            if not _is_instance(inst):
                raise InputError(f"{path}:{n}: not an instance (needs a string id and a scene)")
            if inst["id"] in seen:
                raise InputError(f"{path}:{n}: duplicate instance id {inst['id']}")
            seen.add(inst["id"])
            yield inst


# Files found whole in this process, by (path, size, mtime, inode): a sweep opens its benchmark
# many times, and a file that changed in any of these is hashed afresh.
_VERIFIED: dict[tuple[str, int, int, int], str] = {}


def verify_files(bench: Path, manifest: dict, names: Iterable[str]) -> set[str]:
    """Check ``names`` against the SHA-256 the manifest records for them (InputError on the first
    that differs: a hand-edited qa.jsonl would flip verdicts); returns the names it records none
    for (a benchmark made by hand or by an older build), which the caller checks otherwise."""
    recorded = manifest.get("files")
    recorded = recorded if isinstance(recorded, dict) else {}
    unverified = set()
    for name in names:
        want, path = recorded.get(name), bench / name
        exported = not path.exists() and exported_file(bench, Task(Path(name).stem)) is not None
        if not isinstance(want, str) or exported:  # an export's rows are checked scene by scene
            unverified.add(name)
            continue
        try:
            st = path.stat()
        except OSError:
            raise InputError(f"{path}: missing (manifest.json records its SHA-256)") from None
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
        got = _VERIFIED.get(key) or sha256_file(path)
        if got != want:
            raise InputError(
                f"{path}: changed since the build (SHA-256 {got[:12]}..., manifest.json records "
                f"{want[:12]}...): restore the file or rebuild the benchmark"
            )
        _VERIFIED[key] = got
    return unverified


def check_scenes(path: Path, instances: Iterable[Instance]) -> None:
    """Every scene readable as geometry (InputError naming the file and the instance)."""
    from scoring.geometry.scene import Scene, check_input_scene

    for inst in instances:
        if inst["scene"] == {}:  # a placeholder (hand-made fixtures): no geometry to misread
            continue
        try:
            check_input_scene(Scene.from_geojson(inst["scene"]))
        except InputError as exc:
            raise InputError(f"{path}: instance {inst['id']}: {exc}") from None


@dataclass(frozen=True)
class Benchmark:
    """A benchmark directory, read and checked.

    ``instances[task]`` maps instance id to instance in file order. ``sha256`` is the SHA-256 of the
    manifest's bytes: the identity a run records, so scores are never joined to another benchmark.
    """

    path: Path
    manifest: dict[str, Any]
    sha256: str
    instances: dict[Task, dict[str, Instance]] = field(repr=False)

    @classmethod
    def open(
        cls,
        bench_dir: str | Path,
        tasks: Iterable[str] = tuple(TASK_FILES),
        *,
        require_instances: bool = False,
    ) -> Benchmark:
        path = Path(bench_dir)
        manifest, sha = load_manifest(path)
        wanted = [Task(t) for t in tasks]
        unverified = verify_files(path, manifest, [TASK_FILES[t] for t in wanted])
        by_task: dict[Task, dict[str, Instance]] = {t: {} for t in TASK_FILES}
        for t in wanted:
            by_task[t] = {i["id"]: i for i in iter_instances(path, (t,))}
            if TASK_FILES[t] in unverified:  # no hash to trust: its scenes are checked one by one
                check_scenes(path / TASK_FILES[t], by_task[t].values())
        if any(exported_file(path, t) for t in wanted):  # an export: its maps once, in Parquet
            restore_maps(path, [i for t in wanted for i in by_task[t]])
        if require_instances and not any(by_task.values()):
            files = " / ".join(TASK_FILES[t] for t in wanted)
            raise InputError(f"{path}: no instances ({files})")
        return cls(path, manifest, sha, by_task)

    @property
    def epsg(self) -> int:
        """EPSG code of the task CRS; InputError when the manifest lacks it."""
        try:
            return int(self.manifest["crs"]["epsg"])
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{self.path / 'manifest.json'}: invalid manifest (needs crs.epsg)") from None

    @property
    def protocol(self) -> str:
        """The protocol the benchmark was built under (scoring.vocab.Protocol; older builds: ours)."""
        return str(self.manifest.get("protocol") or "spatialgap")

    @property
    def city(self) -> str:
        return str(self.manifest.get("city") or self.path.name)

    def task_file(self, task: str) -> Path:
        """The file holding ``task``'s instances: <task>.jsonl, or an export's data file."""
        path = self.path / TASK_FILES[Task(task)]
        return path if path.is_file() else exported_file(self.path, task) or path

    def all_instances(self) -> list[Instance]:
        """Every instance, QA first then editing, in file order."""
        return [i for t in TASK_FILES for i in self.instances[t].values()]

    def of_task(self, task: str) -> list[Instance]:
        return list(self.instances[Task(task)].values())

    def get(self, instance_id: str) -> Instance | None:
        for by_id in self.instances.values():
            if instance_id in by_id:
                return by_id[instance_id]
        return None

    def select(self, ids: Iterable[str]) -> list[Instance]:
        """The named instances in the order given (repeats dropped); InputError for unknown ids."""
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if self.get(i) is None]
        if missing:
            raise InputError(f"unknown instance id(s): {', '.join(missing[:5])}")
        return [i for i in (self.get(x) for x in wanted) if i is not None]

    @property
    def context_path(self) -> Path:
        return self.path / "context.geojsonl"

    @property
    def maps_dir(self) -> Path:
        return self.path / "maps"


def edit_reply_form(instance: Instance | None, modality: Modality) -> ReplyForm:
    """The reply form an instance asks for in a modality: "operations" (our protocol) or
    "pixel_geometry" (the paper protocol's map-image edits)."""
    forms: Mapping[str, str] = (instance.get("edit_reply") if instance else None) or {}
    default = ReplyForm.OPERATIONS
    return ReplyForm(forms.get(modality, default)) if isinstance(forms, dict) else default
