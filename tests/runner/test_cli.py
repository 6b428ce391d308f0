import argparse
import json

import pytest
from runner_helpers import make_bench

from scoring.cli import main
from scoring.errors import InputError
from scoring.runner import cli


def parser():
    p = argparse.ArgumentParser(prog="spatialgap")
    cli.add_parser(p.add_subparsers(dest="command"))
    return p


def test_parse_run_and_serve():
    a = parser().parse_args(
        [
            "run",
            "--bench",
            "b",
            "--endpoint",
            "http://h/v1",
            "--model",
            "m",
            "--modality",
            "image",
            "--task",
            "qa",
            "--form",
            "mcq",
            "--out",
            "o",
            "--limit",
            "3",
            "--ids",
            "x",
            "y",
            "--api-key-env",
            "K",
        ]
    )
    assert a.func is cli.cmd_run and a.form == ["mcq"] and a.ids == ["x", "y"] and a.limit == 3
    spec = cli.spec_from_args(a)
    assert spec.base_url == "http://h/v1" and spec.api_key_env == "K"
    a = parser().parse_args(["serve-agent", "--agent", "chance", "--port", "0"])
    assert a.func is cli.cmd_serve_agent and a.host == "127.0.0.1"


def test_user_errors_are_one_line(tmp_path, capsys):
    a = parser().parse_args(
        ["run", "--bench", "b", "--model", "m", "--modality", "geojson", "--task", "qa", "--out", "o"]
    )
    with pytest.raises(InputError, match="--config FILE or --endpoint URL"):
        cli.cmd_run(a)
    cfg = tmp_path / "m.toml"
    cfg.write_text(
        '[models.m]\nkind = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\ntemperature = "hot"\n'
    )
    rc = main(
        [
            "run",
            "--bench",
            str(tmp_path),
            "--config",
            str(cfg),
            "--model",
            "m",
            "--modality",
            "geojson",
            "--task",
            "qa",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "models.m.temperature" in err and "\n" not in err


def test_cli_run_with_config(server, tmp_path, capsys):
    bench = make_bench(tmp_path / "b", maps=False)
    cfg = tmp_path / "m.toml"
    cfg.write_text(f'[models.fake]\nkind = "openai"\nbase_url = "{server.url("ok")}"\nmodel = "fm"\n')
    rc = main(
        [
            "run",
            "--bench",
            str(bench),
            "--config",
            str(cfg),
            "--model",
            "fake",
            "--modality",
            "geojson",
            "--task",
            "edit",
            "--out",
            str(tmp_path / "o"),
            "--no-progress",
        ]
    )
    assert rc == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["model"]["name"] == "fake"
