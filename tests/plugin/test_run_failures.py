"""Runs against a slow or failing loopback server: timeouts are retried and recorded, Cancel ends
a run within a second whatever it is doing, a refused run says what the server said."""

from __future__ import annotations

import time

import pytest
from qgis.core import QgsApplication

from plugin.core.endpoints import Endpoint, save_endpoints
from plugin.core.transport import QgisTransport, RunCancelledError
from plugin.utils.compat import MSG_CRITICAL, MSG_WARNING
from scoring.runner.transport import TransportError
from tests.plugin.conftest import wait_for
from tests.plugin.slowhttp import Reply, chat_reply, error_reply, slow_server

CANCEL_BOUND_S = 1.0  # the promise: Cancel ends a run within a second in every state
RUN_BOUND_S = 30.0  # no run in these tests may take longer (a hang fails the test)
HELD = Reply(hold=True)


def _qa_instance(instances) -> dict:
    return next(i for i in instances.values() if i["task"] == "qa")


def _send(dock, bench, inst, url: str, **extra) -> object:
    timeout = extra.pop("timeout_s", 20.0)
    save_endpoints(
        [Endpoint(name="slow", base_url=url, model="m", timeout_s=timeout, concurrency=1, extra=extra)]
    )
    dock.reload_endpoints()
    dock.open_benchmark(bench)
    dock.select_instance(inst["id"])
    tasks = dock.send(current_only=True)
    assert len(tasks) == 1
    return tasks[0]


def _cancel_and_time(dock, task) -> float:
    """Seconds from Cancel to the end of the task's run() (its callback follows on the GUI)."""
    cancelled_at = time.monotonic()
    dock.cancel_runs()
    wait_for(lambda: task not in dock.tasks, RUN_BOUND_S)
    return task.ended_at - cancelled_at


def test_transport_timeout_and_cancel_are_prompt(qgis_app):
    with slow_server(HELD) as server:
        transport = QgisTransport()
        t0 = time.monotonic()
        with pytest.raises(TransportError) as err:
            transport.post_json(server.base_url + "/chat/completions", {}, {}, 0.3)
        assert err.value.kind == "timeout" and time.monotonic() - t0 < 0.3 + CANCEL_BOUND_S
        # Cancelled from another thread while in flight.
        import threading

        def cancel_when_arrived() -> None:
            if server.wait_requests(2, RUN_BOUND_S):
                transport.cancel_all()

        threading.Thread(target=cancel_when_arrived, daemon=True).start()
        t0 = time.monotonic()
        with pytest.raises(RunCancelledError):
            transport.post_json(server.base_url + "/chat/completions", {}, {}, RUN_BOUND_S)
        assert time.monotonic() - t0 < RUN_BOUND_S / 2
        with pytest.raises(RunCancelledError):  # a cancelled transport sends nothing more
            transport.post_json(server.base_url + "/chat/completions", {}, {}, 1)
        assert len(server.requests) == 2


@pytest.mark.timeout(120)
def test_timeout_is_retried_then_recorded(dock, small_bench, instances):
    inst = _qa_instance(instances)
    with slow_server(HELD) as server:
        task = _send(dock, small_bench, inst, server.base_url, timeout_s=0.3, backoff_base_s=0.01)
        wait_for(lambda: task not in dock.tasks, RUN_BOUND_S)
        assert len(server.requests) == 2  # the first try and one retry (timeouts are retried once)
    verdict = dock.results[inst["id"]]
    assert verdict["verdict"] == "error" and "timed out" in verdict["reason"]
    assert any("timed out" in line for line in task.failures())
    assert dock.last_outcome.level == MSG_CRITICAL and "timed out" in dock.last_outcome.text


@pytest.mark.timeout(120)
def test_cancel_in_flight_ends_within_a_second(dock, small_bench, instances):
    inst = _qa_instance(instances)
    with slow_server(HELD) as server:
        task = _send(dock, small_bench, inst, server.base_url, timeout_s=60)
        assert not dock.model_panel.send_btn.isEnabled()  # one run at a time from the dock
        assert dock.model_panel.cancel_btn.isVisible() or dock.model_panel.cancel_btn.isEnabled()
        assert server.wait_requests(1, RUN_BOUND_S), "the request never reached the server"
        assert _cancel_and_time(dock, task) < CANCEL_BOUND_S
    assert task.cancelled_by_user and task.error is None
    assert dock.last_outcome.level == MSG_WARNING and "cancelled" in dock.last_outcome.text
    assert dock.model_panel.send_btn.isEnabled()


@pytest.mark.timeout(120)
def test_cancel_during_back_off_ends_within_a_second(dock, small_bench, instances):
    inst = _qa_instance(instances)
    # 503 with a long Retry-After: the run waits in its back-off, with nothing in flight.
    busy = error_reply(503, "overloaded", ("Retry-After", "60"))
    with slow_server(busy) as server:
        task = _send(dock, small_bench, inst, server.base_url, backoff_base_s=30, backoff_max_s=60)
        assert server.wait_requests(1, RUN_BOUND_S)
        wait_for(lambda: task.observer.retrying > 0 or task not in dock.tasks, RUN_BOUND_S)
        assert task in dock.tasks, "the run ended instead of backing off"
        assert _cancel_and_time(dock, task) < CANCEL_BOUND_S
        assert len(server.requests) == 1
    assert task.cancelled_by_user


@pytest.mark.timeout(120)
def test_refused_key_shows_the_servers_message(dock, small_bench, instances):
    inst = _qa_instance(instances)
    refused = error_reply(401, "Incorrect API key provided: sk-te****. You can find your key at example")
    with slow_server(refused) as server:
        task = _send(dock, small_bench, inst, server.base_url)
        wait_for(lambda: task not in dock.tasks, RUN_BOUND_S)
    outcome = dock.last_outcome
    assert outcome.level == MSG_CRITICAL  # never a green "0 of 1 correct"
    assert "Incorrect API key" in outcome.text and "Incorrect API key" in outcome.details
    assert "/chat/completions" not in outcome.text  # the server's words lead, not the URL
    if inst["id"] in dock.results:
        assert "Incorrect API key" in dock.results[inst["id"]]["reason"]
    bar = dock.iface.messageBar()
    texts = [item.text() for item in bar.items()]
    assert sum("Incorrect API key" in t for t in texts) == 1  # one bar for this outcome


@pytest.mark.timeout(120)
def test_verdicts_are_tagged_and_cleared_by_endpoint(dock, small_bench, instances):
    inst = _qa_instance(instances)
    with slow_server(chat_reply("Answer: F1")) as server:
        task = _send(dock, small_bench, inst, server.base_url)
        wait_for(lambda: task not in dock.tasks, RUN_BOUND_S)
        assert dock.results[inst["id"]]["_endpoint"] == "slow"
        item = dock.list.currentItem() or dock.list.item(0)
        assert any("· slow" in dock.list.row_text(i) for i in range(dock.list.count())), item
        save_endpoints(
            [Endpoint(name="slow", base_url=server.base_url, model="m"), Endpoint(name="other", model="m")]
        )
        dock.reload_endpoints()
        dock.model_panel.endpoint_combo.setCurrentText("other")
        assert inst["id"] not in dock.results and inst["id"] not in dock.verdicts
    save_endpoints([])


@pytest.mark.timeout(120)
def test_unloading_the_plugin_during_a_run_ends_it(qgis_iface, small_bench, instances):
    from plugin.main import SpatialGapPlugin

    inst = _qa_instance(instances)
    plugin = SpatialGapPlugin(qgis_iface)
    plugin.initGui()
    dock = plugin.ensure_dock()
    with slow_server(HELD) as server:
        task = _send(dock, small_bench, inst, server.base_url, timeout_s=60)
        assert server.wait_requests(1, RUN_BOUND_S)
        plugin.unload()  # what QGIS does on quit
        wait_for(lambda: QgsApplication.taskManager().countActiveTasks() == 0, 5)
        assert task.ended_at is not None
    save_endpoints([])


def test_missing_maps_say_how_to_render_them():
    from plugin.gui.outcome import run_outcome

    error = "1 map image(s) missing for modality image, first: /b/maps/x.png"
    outcome = run_outcome("m", False, error, {}, [])
    assert "Render benchmark maps" in outcome.text and "map folder left empty" in outcome.text
