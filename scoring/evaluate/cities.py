"""Each city's benchmark: built once and reused while its source, seed, counts and tool version
match; its maps rendered in a background process while map-free runs proceed."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from collections import OrderedDict
from pathlib import Path

from scoring import __version__
from scoring.build.builder import FORMATS, build_benchmark
from scoring.errors import InputError, OutputError, SpatialGapError
from scoring.evaluate.early_render import EarlyRender
from scoring.evaluate.plan import City
from scoring.execute import Executor
from scoring.extract.osm import default_osm_path
from scoring.formats.benchmark import Benchmark, load_manifest
from scoring.formats.mapsets import MapSet, read_map_set, set_path
from scoring.render.version import RENDERER_VERSION
from scoring.support.files import read_json, sha256_file

MAP_POLL_S = 0.25
RECENT_MAPS = 48  # ~20 MB of PNGs
RENDER_STOP_S = 30.0  # for an interrupted render to shut its worker pool down


def say(msg: str) -> None:
    print(f"[evaluate] {msg}", file=sys.stderr, flush=True)


def bench_current(city: City, force: bool = False) -> bool:
    """An existing benchmark is reused only if it was built from the same request: same source
    bytes, seed, counts, relations, protocol, tool version and a format this builder writes
    (another format samples other instances from the same request)."""
    if force or not (city.bench / "manifest.json").exists():
        return False
    try:
        m, _ = load_manifest(city.bench)
        source = Path(city.osm) if city.osm else default_osm_path()
        same_source = m["source"]["sha256"] == sha256_file(source)
        req = m["requested"]
    except (OSError, ValueError, KeyError, TypeError, SpatialGapError):
        return False
    same_relations = city.relations is None or sorted(req.get("relations") or []) == sorted(city.relations)
    return (
        same_source
        and m.get("seed") == city.seed
        and req.get("qa_per_relation") == city.n_qa
        and req.get("edit_per_relation") == city.n_edit
        and same_relations
        and m.get("tool_version") == __version__
        and m.get("format_version") in FORMATS
        and m.get("protocol", "spatialgap") == city.protocol
    )


def instance_ids(bench: Path) -> list[str]:
    return [i["id"] for i in Benchmark.open(bench).all_instances()]


def maps_state(bench: Path, ids: list[str]) -> tuple[str, list[str]]:
    """("current" | "missing" | "stale", ids without a map). Maps drawn by another renderer
    version are stale: image results would describe pixels the current code no longer draws."""
    maps = bench / "maps"
    missing = [i for i in ids if not (maps / f"{i}.png").is_file() or not (maps / f"{i}.json").is_file()]
    present = [i for i in ids if i not in set(missing)]
    if present:
        try:
            versions = {
                read_json(maps / f"{i}.json")["renderer"]["version"] for i in (present[0], present[-1])
            }
        except (SpatialGapError, KeyError, TypeError):
            return "stale", ids
        if versions != {RENDERER_VERSION}:
            return "stale", ids
    return ("missing" if missing else "current"), missing


def set_aside_runs(root: Path) -> None:
    """Runs journaled against a benchmark (or maps) about to be replaced cannot be resumed on the
    new one; they are moved aside (never deleted) so the new runs start clean."""
    runs = root / "runs"
    if not runs.is_dir():
        return
    target = root / f"runs-superseded-{time.strftime('%Y%m%dT%H%M%S')}"
    try:
        runs.rename(target)
    except OSError as exc:
        raise OutputError(f"{runs}: cannot move aside before rebuilding ({exc.strerror})") from None
    say(f"benchmark rebuilt: previous runs moved to {target}")


def prepare(
    city: City,
    force: bool,
    jobs: int | None,
    progress: bool,
    wants_maps: bool,
    executor: Executor | None = None,
) -> list[str]:
    """Build the city's benchmark unless a current one exists; returns the ids still needing a
    map (empty when no map modality is asked for)."""
    if city.given is not None:
        say(f"using benchmark {city.given} as it is (--bench)")
    elif bench_current(city, force):
        say(f"reusing benchmark {city.bench} (use --force to rebuild)")
    else:
        set_aside_runs(city.root)
        m = build_benchmark(
            city.osm,
            city.bench,
            city.name or None,
            city.seed,
            city.n_qa,
            city.n_edit,
            list(city.relations) if city.relations else None,
            jobs,
            force=True,
            progress=progress,
            executor=executor,
            protocol=city.protocol,
        )
        say(
            f"built {m['counts']['qa']} QA + {m['counts']['edit']} editing instances "
            f"({m['city']}, protocol {m['protocol']})"
        )
    if not wants_maps:
        return []
    ids = instance_ids(city.bench)
    state, missing = maps_state(city.bench, ids)
    if state == "stale" and city.given is not None:
        raise InputError(
            f"{city.bench / 'maps'}: drawn by another renderer version; redraw them "
            f"(spatialgap render --bench {city.bench}) or evaluate without maps"
        )
    if state == "stale":
        say(f"{city.bench / 'maps'}: drawn by another renderer version, redrawing")
        set_aside_runs(city.root)
        shutil.rmtree(city.bench / "maps", ignore_errors=True)
    return missing


class MapRenderer:
    """Renders the maps of several benchmarks, one after the other, in a child process
    (`spatialgap render`), so the sweep's event loop keeps sending map-free requests meanwhile.
    ``ready(bench)`` completes when that benchmark's maps exist."""

    scheduler: str | None = None  # a Dask scheduler the render joins (evaluate on a cluster)

    def __init__(
        self,
        work: list[tuple[Path, list[str]]],
        jobs: int | None,
        sets: tuple[str, ...] = (),
        early: EarlyRender | None = None,
    ):
        self.work = work
        self.sets = sets  # map-set modalities (image-multi, image-context), drawn after the maps
        self._recent: OrderedDict[Path, bytes] = OrderedDict()
        self.jobs = jobs or os.cpu_count() or 1
        self.done: dict[Path, asyncio.Future[None]] = {}
        self.seconds = 0.0
        self.cpu_seconds: float | None = None  # of the render processes measured (the early one)
        self._proc: asyncio.subprocess.Process | None = None
        self.early = early  # a render started before its benchmark was built, waiting for ids

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for bench, _ in self.work:
            self.done.setdefault(bench, loop.create_future())
        t0 = time.perf_counter()
        try:
            for bench, ids in self.work:
                if self.early is not None and self.early.bench == bench:
                    early, self.early = self.early, None
                    await early.render(ids)
                    self.cpu_seconds = early.cpu_seconds
                elif ids:
                    await self._render(bench, ids)
                for modality in self.sets:
                    todo = [
                        i for i in instance_ids(bench) if not set_path(bench / "maps", i, modality).is_file()
                    ]
                    if todo:
                        await self._render(bench, todo, modality)
                self.done[bench].set_result(None)
        except BaseException:
            # Waiting map runs are cancelled; the render's own error reaches the sweep through
            # this task.
            for fut in self.done.values():
                fut.cancel()
            raise
        finally:
            self.seconds = time.perf_counter() - t0

    async def ready(self, bench: Path) -> None:
        fut = self.done.get(bench)
        if fut is not None:
            await asyncio.shield(fut)

    async def map_png(self, bench: Path, iid: str) -> bytes:
        """The map of ``iid`` once it is drawn (the renderer writes each PNG last and atomically,
        so an existing PNG is complete), so map runs follow the render instead of waiting for
        its end."""
        path = bench / "maps" / f"{iid}.png"
        while not path.is_file():
            fut = self.done.get(bench)
            if fut is None or fut.done():
                await self.ready(bench)  # raises if the render failed
                if not path.is_file():
                    raise InputError(f"{path}: map missing after rendering")
                break
            await asyncio.sleep(MAP_POLL_S)
        # The runs that show maps go side by side through the same instances: one read (and one
        # bytes object, so one data URL and one digest) serves them all.
        png = self._recent.pop(path, None)
        if png is None:
            png = path.read_bytes()
        self._recent[path] = png
        if len(self._recent) > RECENT_MAPS:
            self._recent.popitem(last=False)
        return png

    async def map_set(self, bench: Path, modality: str, iid: str) -> MapSet:
        """The map set of ``iid`` in ``modality`` once the benchmark's maps are all drawn."""
        await self.ready(bench)
        return read_map_set(bench / "maps", iid, modality)

    async def _render(self, bench: Path, ids: list[str], modality: str = "image") -> None:
        cmd = [sys.executable, "-m", "scoring", "render", "--bench", str(bench), "--jobs", str(self.jobs)]
        cmd += ["--no-progress", "--modalities", modality]
        if modality == "image":
            cmd += ["--edit-first"]  # the map runs go editing first (scoring.evaluate.sweep.plan_runs)
        if self.scheduler:
            cmd += ["--scheduler", self.scheduler]
        # Only the missing maps, so an interrupted render resumes where it stopped.
        if len(ids) < len(instance_ids(bench)):
            cmd += ["--ids", *ids]
        what = f"{len(ids)} maps" if modality == "image" else f"the {modality} maps of {len(ids)} instances"
        say(f"rendering {what} of {bench} in the background")
        self._proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        proc = self._proc
        try:
            _, err = await proc.communicate()
        finally:
            if proc.returncode is None:  # interrupted: stop the render and reap it in this loop
                self.stop()
                try:
                    await asyncio.wait_for(proc.wait(), RENDER_STOP_S)
                except (TimeoutError, asyncio.CancelledError):
                    proc.kill()
            self._proc = None
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise SpatialGapError(f"rendering the maps of {bench} failed: {tail[0]}")

    def stop(self) -> None:
        """Interrupt a render in progress (SIGINT: its worker pool is shut down too)."""
        if self.early is not None:
            early, self.early = self.early, None
            early.stop()
        proc, self._proc = self._proc, None  # signalled once: a second SIGINT would cut its clean-up
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGINT)
