"""`evaluate --estimate` (issue 28, item 6): requests, tokens and cost from the prompts themselves,
with nothing sent: a real loopback server configured as the model receives no request."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scoring.cli import main
from scoring.evaluate.estimate import IMAGE_TOKENS, message_tokens


class _Counting(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.hits.append(self.path)
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args):
        pass


def test_estimate_prints_tokens_and_cost_and_sends_nothing(tmp_path, capsys):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "models.toml"
        config.write_text(
            f'[models.priced]\nkind = "openai"\nbase_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
            'model = "m"\nmax_tokens = 100\nprice_in = 1.0\nprice_out = 2.0\nmodalities = ["geojson"]\n'
        )
        out = tmp_path / "out"
        rc = main(
            [
                "evaluate",
                "--out",
                str(out),
                "--config",
                str(config),
                "--qa",
                "1",
                "--edit",
                "1",
                "--estimate",
                "--no-progress",
            ]
        )
    finally:
        server.shutdown()
    assert rc == 0 and _Counting.hits == []
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("priced")]
    assert {(cells[1], cells[2]) for cells in lines} == {("geojson", "qa"), ("geojson", "edit")}
    for cells in lines:
        requests, tokens_in, out_cap, cost = int(cells[3]), int(cells[4]), int(cells[5]), float(cells[6])
        assert requests > 0 and tokens_in > 50 * requests and out_cap == 100 * requests
        assert cost == round(tokens_in * 1.0 / 1e6 + out_cap * 2.0 / 1e6, 2)


def test_message_tokens_counts_text_and_maps():
    msgs = [
        {"role": "system", "content": "x" * 40},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "y" * 9},
                {"type": "image_url", "image_url": {"url": "data:"}},
            ],
        },
    ]
    assert message_tokens(msgs) == 10 + 3 + IMAGE_TOKENS
