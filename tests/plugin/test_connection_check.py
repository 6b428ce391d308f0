"""The endpoint dialog's connection check against hostile servers: a readable verdict, never an
exception out of the dialog."""

from __future__ import annotations

import pytest

from plugin.core.endpoints import Endpoint
from tests.hostile.server import HostileServer


@pytest.fixture
def hostile():
    srv = HostileServer().start()
    yield srv
    srv.stop()


def test_a_model_list_nested_100000_deep_reads_as_unreadable(hostile, qgis_app):
    from plugin.gui.settings_dialog import test_connection

    ok, msg = test_connection(Endpoint(name="t", base_url=hostile.url("deep"), model="m"), None)
    assert ok and "not readable" in msg


def test_a_401_holding_a_5000_digit_number_is_a_one_line_refusal(hostile, qgis_app):
    from plugin.gui.settings_dialog import test_connection

    ok, msg = test_connection(Endpoint(name="t", base_url=hostile.url("big-int-401"), model="m"), "sk-x1")
    assert not ok and "HTTP 401" in msg and "\n" not in msg and len(msg) < 800
