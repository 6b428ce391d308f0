"""Sending more than one instance asks first, with the count and the estimated cost."""

from __future__ import annotations

from plugin.core.endpoints import Endpoint, save_endpoints
from plugin.gui import confirm


def _endpoint(**prices) -> Endpoint:
    return Endpoint(name="paid", base_url="http://127.0.0.1:9/v1", model="m", max_tokens=1000, **prices)


def test_a_filtered_set_is_sent_only_after_the_count_and_cost_are_shown(dock, small_bench, monkeypatch):
    save_endpoints([_endpoint(price_in=2.5, price_out=10.0)])
    dock.reload_endpoints()
    assert dock.open_benchmark(small_bench)
    asked: list[tuple[str, str]] = []

    def decline(box) -> bool:
        asked.append((box.text(), box.informativeText()))
        return False

    monkeypatch.setattr(confirm.SendConfirmation, "confirmed", decline)
    n = len(dock.filtered())
    assert n > 1
    assert dock.send(current_only=False) == [] and not dock.run_tasks  # declined: nothing sent
    ((question, detail),) = asked
    assert f"Send {n} instances to paid?" == question
    assert f"{n} requests" in detail and "tokens in" in detail and "at most 1,000 tokens out" in detail
    assert "Estimated cost: at most " in detail
    # One instance is sent without a question (nothing asked, whatever the answer would be).
    dock.select_instance(dock.filtered()[0]["id"])
    monkeypatch.setattr(dock.model_panel, "endpoint", lambda name=None: None)
    dock.send(current_only=True)
    assert len(asked) == 1
    save_endpoints([])


def test_the_estimate_says_when_no_price_is_set(small_bench, instances):
    chosen = [i for i in instances.values() if i["task"] == "edit"][:3]
    text = confirm.estimate_text(chosen, _endpoint(), "geojson", "mcq")
    assert text.startswith("3 requests, about ") and "no price set" in text


def test_the_estimated_cost_is_tokens_times_the_price(instances):
    from scoring.evaluate.estimate import request_cost

    chosen = [i for i in instances.values() if i["task"] == "edit"][:2]
    requests, tokens, cost = request_cost(chosen, "geojson", lambda _i: "edit", 2.0, 8.0, 500)
    assert requests == 2 and tokens > 100
    assert abs(cost - (tokens * 2.0 + 2 * 500 * 8.0) / 1e6) < 1e-12
