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
        state["dialog"] = InstallDialog(stand_in.missing, iface.mainWindow())
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
        cfg = {
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
