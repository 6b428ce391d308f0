"""Model runs through the QGIS network stack, keys in the auth database, constraint layers."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from qgis.core import QgsProject, QgsSettings
from qgis.PyQt.QtTest import QSignalSpy

from plugin.core.auth import AuthKeyProvider, read_key, remove_key, store_key
from plugin.core.endpoints import Endpoint, load_endpoints, save_endpoints
from plugin.core.transport import QgisTransport
from scoring.runner.transport import TransportError
from tests.plugin.conftest import wait_for

SECRET = "sk-spatialgap-test-0123456789abcdef"


def test_qgis_transport_statuses_and_failures(agent_url):
    t = QgisTransport()
    ok = t.post_json(
        agent_url + "/chat/completions", {}, {"messages": [{"role": "user", "content": "hi"}]}, 10
    )
    assert ok.status == 200 and json.loads(ok.body)["choices"][0]["message"]["content"]
    assert ok.headers["content-type"] == "application/json"
    missing = t.post_json(agent_url + "/nowhere", {}, {"messages": []}, 10)
    assert missing.status == 404 and b"no route" in missing.body  # HTTP errors are responses
    with pytest.raises(TransportError) as err:
        t.post_json(
            agent_url + "/chat/completions",
            {},
            {"messages": [{"role": "user", "content": "hi"}]},
            10,
            max_bytes=10,
        )
    assert err.value.kind == "too_large" and err.value.status == 200
    # Nothing listens: a connect failure.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(TransportError) as err:
        t.post_json(f"http://127.0.0.1:{port}/v1/chat/completions", {}, {}, 5)
    assert err.value.kind == "connect"
    # A server that accepts and never answers: the user's timeout applies.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        with pytest.raises(TransportError) as err:
            t.post_json(f"http://127.0.0.1:{silent.getsockname()[1]}/v1/chat/completions", {}, {}, 0.5)
        assert err.value.kind == "timeout"
    finally:
        silent.close()


def test_key_lives_only_in_the_auth_database(auth_ready, qgis_app):
    authcfg = store_key("secret-model", SECRET)
    ep = Endpoint(name="secret-model", base_url="http://127.0.0.1:9/v1", model="m", authcfg=authcfg)
    save_endpoints([ep])
    settings = QgsSettings()
    settings.sync()
    ini = open(settings.fileName(), encoding="utf-8", errors="replace").read()
    assert authcfg in ini and SECRET not in ini
    assert load_endpoints()[0].authcfg == authcfg
    assert read_key(authcfg) == SECRET
    provider = AuthKeyProvider({"secret-model": authcfg})
    assert provider.get_key(ep.spec()) == SECRET and SECRET not in repr(provider)
    # Replacing the key keeps the same config id.
    assert store_key("secret-model", SECRET + "x", authcfg) == authcfg
    assert read_key(authcfg) == SECRET + "x"
    assert remove_key(authcfg)
    save_endpoints([])


def test_connection_check_is_readable(agent_url, qgis_app):
    from plugin.gui.settings_dialog import test_connection

    ok, msg = test_connection(Endpoint(name="t", base_url=agent_url, model="tools"), SECRET)
    assert ok and "tools" in msg
    ok, msg = test_connection(
        Endpoint(name="t", base_url=agent_url.replace("/v1", "/nope"), model="tools"), SECRET
    )
    assert not ok and "HTTP 404" in msg and "no route" in msg and SECRET not in msg
    ok, msg = test_connection(Endpoint(name="t", base_url="ftp://x", model="tools"), None)
    assert not ok and "base_url" in msg


def _edit_instance(instances, relation):
    return next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == relation)


@pytest.mark.timeout(300)
def test_task_round_trip_with_tools_agent(dock, small_bench, instances, agent_url, auth_ready):
    from scoring.formats.rundir import final_predictions
    from scoring.score import score_prediction

    authcfg = store_key("tools-agent", SECRET)
    save_endpoints(
        [
            Endpoint(
                name="tools-agent",
                base_url=agent_url,
                model="tools",
                authcfg=authcfg,
                timeout_s=30,
                concurrency=2,
            )
        ]
    )
    dock.reload_endpoints()
    dock.open_benchmark(small_bench)
    inst = _edit_instance(instances, "M01")
    dock.select_instance(inst["id"])
    tasks = dock.send(current_only=True)
    assert len(tasks) == 1
    task = tasks[0]
    wait_for(lambda: task not in dock.tasks, 90)
    assert task.error is None and task.summary.ok == 1
    run = small_bench / "runs" / "tools-agent-geojson-edit"
    finals = final_predictions(run / "predictions.jsonl")
    rec = finals[f"{inst['id']}|edit"]
    expected = score_prediction(inst, rec, small_bench)
    got = dock.results[inst["id"]]
    assert got["verdict"] == expected.verdict and got["constraints"] == expected.constraints
    assert dock.verdicts[inst["id"]] == expected.verdict
    # The secret went to the auth DB only: never into the run's files.
    for p in run.iterdir():
        assert SECRET not in p.read_text(encoding="utf-8", errors="replace")
    # The returned edit is drawn beside F0 as it was before the edit, with the constraints.
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    names = [n.layer().name() for n in group.findLayers()]
    assert "F0 before the edit" in names and any(n.startswith("edited F0") for n in names)
    assert any(n.startswith("constraints (") for n in names)
    # The filtered set: every edit instance of the benchmark, one task, all answered.
    dock.filters.select("task", "edit")
    dock.confirm_send = lambda chosen, endpoint: True  # the question itself: test_send_confirmation
    tasks = dock.send(current_only=False)
    wait_for(lambda: all(t not in dock.tasks for t in tasks), 120)
    n_edit = sum(1 for i in instances.values() if i["task"] == "edit")
    assert sum(1 for k in dock.verdicts if k in instances and instances[k]["task"] == "edit") == n_edit
    # After a restart (a new dock), the last verdicts come back from the runs on disk.
    from plugin.gui.dock import SpatialGapDock

    again = SpatialGapDock(dock.iface)
    again.reload_endpoints()
    assert again.open_benchmark(small_bench)
    wait_for(lambda: not again.tasks, 60)
    assert {k: v["verdict"] for k, v in again.results.items()} == {
        k: v["verdict"] for k, v in dock.results.items() if k in again.results
    }
    assert set(dock.verdicts) <= set(again.verdicts)
    again.deleteLater()
    save_endpoints([])
    remove_key(authcfg)


@pytest.mark.timeout(300)
def test_cancel_stops_the_run(dock, small_bench, instances, auth_ready):
    """A run cancelled while its request is in flight ends promptly and says so (no traceback, no
    QGIS abort)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    silent.settimeout(60)  # the accepting thread never outlives the test by long
    in_flight = threading.Event()
    held = []

    def accept() -> None:
        try:
            conn, _ = silent.accept()
        except OSError:
            return
        held.append(conn)  # accepted and never answered
        in_flight.set()

    threading.Thread(target=accept, daemon=True).start()
    try:
        save_endpoints(
            [
                Endpoint(
                    name="silent",
                    base_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1",
                    model="m",
                    timeout_s=60,
                    concurrency=1,
                )
            ]
        )
        dock.reload_endpoints()
        dock.open_benchmark(small_bench)
        dock.select_instance(_edit_instance(instances, "D01")["id"])
        task = dock.send(current_only=True)[0]
        terminated = QSignalSpy(task.taskTerminated)
        wait_for(in_flight.is_set, 20)  # the request reached the server: the run is under way
        task.cancel()
        # The timeout (well under the endpoint's 60 s) fails the test if cancelling does not stop it.
        assert len(terminated) or terminated.wait(20_000), "the cancelled task did not end"
        wait_for(lambda: task not in dock.tasks, 5)
        assert task.cancelled_by_user and task.error is None
    finally:
        for conn in held:
            conn.close()
        try:
            silent.shutdown(socket.SHUT_RDWR)  # wakes a thread still in accept()
        except OSError:
            pass
        silent.close()
        save_endpoints([])
