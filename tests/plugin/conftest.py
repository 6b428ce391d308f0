"""Fixtures for the QGIS plugin tests (pytest-qgis, headless)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

RELATIONS = ["D01", "D04", "M01", "M02", "M15", "O02", "O03", "O06", "T03", "T11"]
MASTER_PASSWORD = "spatialgap-test-master"


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory):
    """A small real benchmark (embedded Helsinki, a few relations, 2 instances each)."""
    from scoring.build.builder import build_benchmark

    out = tmp_path_factory.mktemp("plugin-bench") / "hel"
    build_benchmark(None, out, seed=0, n_qa=2, n_edit=2, relations=RELATIONS, jobs=1, progress=False)
    return out


@pytest.fixture(scope="session")
def instances(small_bench):
    out = {}
    for name in ("qa.jsonl", "edit.jsonl"):
        for line in (small_bench / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                inst = json.loads(line)
                out[inst["id"]] = inst
    return out


@pytest.fixture(scope="session")
def agent_url():
    """The `tools` reference agent served over loopback HTTP."""
    from scoring.runner.agents import start_server

    server, thread = start_server("tools")
    yield server.base_url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def auth_ready(qgis_app):
    """The auth manager of the test profile, unlocked with a master password set here."""
    from qgis.core import QgsApplication

    am = QgsApplication.authManager()
    db = Path(QgsApplication.qgisAuthDatabaseFilePath()).resolve()
    # Never touch a real user's auth database: pytest-qgis points the profile at .qgis-settings.
    assert ".qgis-settings" in str(db) or str(db).startswith(("/tmp", os.environ.get("TMPDIR", "/tmp"))), db
    assert am.setMasterPassword(MASTER_PASSWORD, True)
    return am


@pytest.fixture(autouse=True)
def fresh_dock_memory(qgis_app):
    """Each test starts with a dock that remembers nothing (tests/plugin/test_memory.py checks
    what it remembers)."""
    from plugin.core.memory import forget

    forget()
    yield
    forget()


TASK_DRAIN_S = 10.0  # a cancelled task that takes longer than this to end is a bug


@pytest.fixture(autouse=True)
def no_task_left_running(qgis_app):
    """Every plugin test ends with no QGIS task running: a task left blocked would hang the whole
    session at pytest-qgis's teardown (QThreadPool.waitForDone), so it fails this test instead."""
    yield
    from qgis.core import QgsApplication

    manager = QgsApplication.taskManager()
    if manager.countActiveTasks() == 0:
        return
    names = [task.description() for task in manager.activeTasks()]
    manager.cancelAll()
    try:
        wait_for(lambda: manager.countActiveTasks() == 0, TASK_DRAIN_S)
    except TimeoutError:
        pytest.fail(f"tasks still running {TASK_DRAIN_S:g} s after cancel: {names}")


@pytest.fixture
def dock(qgis_iface, qgis_new_project):
    from qgis.core import QgsApplication

    from plugin.gui.dock import SpatialGapDock

    d = SpatialGapDock(qgis_iface)
    yield d
    d.cancel_tasks()
    wait_for(lambda: QgsApplication.taskManager().countActiveTasks() == 0, TASK_DRAIN_S)
    d.deleteLater()


def wait_for(predicate, timeout: float = 60.0) -> None:
    """Run the Qt event loop (task callbacks arrive through it) until predicate() holds; a
    TimeoutError after `timeout` seconds fails the test. An exception in predicate() is raised
    here (inside a Qt slot it would abort the process)."""
    from qgis.PyQt.QtCore import QEventLoop, QTimer

    if predicate():
        return
    loop = QEventLoop()
    raised: list[BaseException] = []

    def check() -> None:
        try:
            if predicate():
                loop.quit()
        except Exception as exc:  # noqa: BLE001 - re-raised below, outside the slot
            raised.append(exc)
            loop.quit()

    poll = QTimer()
    poll.setInterval(10)
    poll.timeout.connect(check)
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    poll.start()
    deadline.start(int(timeout * 1000))
    loop.exec()
    poll.stop()
    deadline.stop()
    if raised:
        raise raised[0]
    if not predicate():
        raise TimeoutError(f"condition not reached within {timeout:g} s")
