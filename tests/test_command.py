"""The `spatialgap` command: each command loads only its own stage."""

import subprocess
import sys

from scoring.cli import COMMAND_MODULES, _module_of, main


def test_a_command_imports_only_its_stage():
    # serve-agent's first stderr line is its address (read by evaluate): no GDAL or matplotlib
    # import may print warnings before it, nor slow its start.
    code = (
        "import sys; from scoring.cli import _module_of, make_parser; "
        "make_parser(_module_of(['serve-agent', '--agent', 'chance'])); "
        "heavy = ('matplotlib', 'osgeo', 'scoring.render', 'scoring.score'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"


def test_every_command_is_found_and_help_lists_them_all(capsys):
    for module, commands in COMMAND_MODULES.items():
        for command in commands:
            assert _module_of(["-v", command, "--x"]) == [module]
    assert _module_of(["--help"]) == list(COMMAND_MODULES)
    assert main([]) == 2
    out = capsys.readouterr().out
    assert all(c in out for cs in COMMAND_MODULES.values() for c in cs)


# ---- issue 27: one line for every error a user can make, nothing half-written -----------------

import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from scoring.build.builder import build_benchmark  # noqa: E402
from tests.conftest import VENV_BIN  # noqa: E402

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cmd") / "bench"
    build_benchmark(None, out, n_qa=1, n_edit=1, relations=["M01"], jobs=1, progress=False)
    return out


def _spatialgap(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(VENV_BIN / "spatialgap"), *args], capture_output=True, text=True, timeout=300, env=env
    )


def _one_line(p: subprocess.CompletedProcess, command: str, code: int = 2) -> str:
    assert p.returncode == code, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"spatialgap {command}: error: "), p.stderr
    assert len(lines[0]) < 600, lines[0]  # one readable line, whatever the user gave
    return lines[0]


def _run_args(bench: Path, out: Path, *model: str) -> list[str]:
    return ["run", "--bench", str(bench), *model, "--modality", "geojson", "--task", "qa",
            "--out", str(out), "--no-progress"]  # fmt: skip


def test_a_models_toml_that_is_not_utf8_is_one_line(bench, tmp_path):
    cfg = tmp_path / "models.toml"
    cfg.write_bytes(b'[models.m]\nkind = "openai"\nmodel = "caf\xe9"\nbase_url = "http://127.0.0.1:9/v1"\n')
    out = tmp_path / "run"
    line = _one_line(_spatialgap(*_run_args(bench, out, "--config", str(cfg), "--model", "m")), "run")
    assert f"{cfg}: not a UTF-8 text file" in line
    assert not out.exists()


@pytest.mark.parametrize(
    "url,needle",
    [
        ("http://[::1:8000/v1", "not a valid URL: Invalid IPv6 URL"),
        ("http://127.0.0.1:99999/v1", "not a valid URL: Port out of range"),
        (f"http://127.0.0.1:{SECRET}/v1", "not a valid URL: the port is not a number"),
        (f"http://127.0.0.1:9/v1?api_key={SECRET}", "credentials (query parameter 'api_key')"),
        (f"http://127.0.0.1:9/v1?x=1&access_token={SECRET}", "credentials (query parameter 'access_token')"),
        ("http://127.0.0.1:9/v1#frag", "must not contain a #fragment"),
    ],
)
def test_a_bad_base_url_is_one_line_that_never_echoes_a_secret(bench, tmp_path, url, needle):
    out = tmp_path / "run"
    cfg = tmp_path / "models.toml"
    cfg.write_text(f'[models.m]\nkind = "openai"\nmodel = "x"\nbase_url = "{url}"\n')
    for model in (["--config", str(cfg), "--model", "m"], ["--endpoint", url, "--model", "x"]):
        p = _spatialgap(*_run_args(bench, out, *model))
        line = _one_line(p, "run")
        assert needle in line and "base_url" in line, line
        assert SECRET not in p.stderr + p.stdout
        assert not out.exists()


def test_an_option_query_goes_after_the_endpoint_path(bench, chance, tmp_path):
    # `?api-version=...` (Azure-style) is no credential: kept, after /chat/completions; the agent
    # server answers only on that path, so a query before it would be a 404
    out = tmp_path / "run"
    p = _spatialgap(
        *_run_args(bench, out, "--endpoint", f"{chance.base_url}?api-version=2024-06-01", "--model", "chance")
    )
    assert p.returncode == 0, p.stderr
    assert all(json.loads(x)["status"] == "ok" for x in (out / "predictions.jsonl").read_text().splitlines())


def test_a_nul_byte_in_an_argument_is_one_line(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["build", "--out", f"{out}\0x", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"spatialgap build: error: argument {str(out) + chr(0) + 'x'!r} contains a NUL byte"]
    assert not out.exists()


def test_a_5000_character_path_is_one_short_line(bench, tmp_path):
    long = tmp_path / ("x" * 5000)
    line = _one_line(_spatialgap("build", "--out", str(long), "--no-progress", "--no-render"), "build")
    assert "File name too long" in line and "…" in line
    line = _one_line(
        _spatialgap("score", "--bench", str(bench), "--run", str(long), "--out", str(tmp_path / "r")), "score"
    )
    assert not (tmp_path / "r").exists()


def _on_a_full_disk(
    tmp_path: Path, size: str, *command: str
) -> tuple[subprocess.CompletedProcess, list[str]]:
    """``command`` with its output on a tmpfs of ``size`` (a private mount namespace, so nothing
    outside the test sees it); returns the process and the files left on the tmpfs."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) (util-linux) to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (
        f'mount -t tmpfs -o size={size} tmpfs "{disk}" || exit 97; '
        '"$@" 2>"$ERR"; rc=$?; find "$DISK" -mindepth 1 >"$LEFT"; exit $rc'
    )
    env = dict(os.environ, ERR=str(tmp_path / "err"), LEFT=str(tmp_path / "left"), DISK=str(disk))
    root = [] if os.geteuid() == 0 else ["--map-root-user"]
    p = subprocess.run(
        ["unshare", *root, "--mount", "sh", "-c", script, "sh", *command],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    if p.returncode == 97:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    p.stderr = (tmp_path / "err").read_text()
    return p, (tmp_path / "left").read_text().split()


def test_disk_full_is_one_line_and_leaves_nothing_half_written(bench, tmp_path):
    exe = str(VENV_BIN / "spatialgap")
    disk = tmp_path / "disk"
    p, left = _on_a_full_disk(
        tmp_path, "64k", exe, "build", "--out", str(disk / "b"), "--relations", "M01", "--qa", "1",
        "--edit", "1", "--no-render", "--no-progress", "--jobs", "1",
    )  # fmt: skip
    line = _one_line(p, "build")
    assert "cannot write (No space left on device)" in line and str(disk) in line
    assert left == []  # no partial benchmark directory, no temporary file


def test_score_on_a_full_disk_is_one_line_naming_the_file(bench, chance, tmp_path):
    run = tmp_path / "run"
    assert (
        _spatialgap(*_run_args(bench, run, "--endpoint", chance.base_url, "--model", "chance")).returncode
        == 0
    )
    disk = tmp_path / "disk"
    exe = str(VENV_BIN / "spatialgap")
    p, left = _on_a_full_disk(
        tmp_path, "8k", exe, "score", "--bench", str(bench), "--run", str(run), "--out", str(disk / "r"),
        "--no-progress",
    )  # fmt: skip
    line = _one_line(p, "score")
    assert str(disk / "r") in line and "No space left on device" in line
    assert not [f for f in left if f.endswith(".tmp")]  # no temporary file left


# ---- the command line's own manners ------------------------------------------------------------


def test_help_does_not_import_scipy_stats():
    code = (
        "import sys; from scoring.cli import make_parser; make_parser().format_help(); "
        "print('scipy.stats' in sys.modules)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "False"


def test_a_bad_enum_value_lists_the_choices_by_value(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--bench", "b", "--model", "m", "--modality", "geojsn", "--task", "qa", "--out", "o"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "'geojson', 'image'" in err and "Modality" not in err


def test_a_mistyped_command_gets_a_did_you_mean(capsys):
    with pytest.raises(SystemExit):
        main(["evalute", "--out", "x"])
    assert "did you mean 'evaluate'?" in capsys.readouterr().err


def test_json_prints_a_record_on_an_argument_error(capsys):
    with pytest.raises(SystemExit):
        main(["--json", "evaluate", "--qa", "many", "--out", "x"])
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["exit_code"] == 2 and record["command"] == "evaluate" and "--qa" in record["error"]


def test_quiet_run_prints_no_result_line(bench, chance, tmp_path, capsys):
    args = ["run", "--bench", str(bench), "--endpoint", chance.base_url, "--model", "chance"]
    args += ["--modality", "geojson", "--task", "qa", "--limit", "1", "--out", str(tmp_path / "r")]
    assert main(["-q", *args, "--no-progress"]) == 0
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_estimate_needs_no_api_key(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SG_UNSET_KEY", raising=False)
    config = tmp_path / "models.toml"
    config.write_text(
        '[models.keyed]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        'api_key_env = "SG_UNSET_KEY"\nmodalities = ["geojson"]\n'
    )
    args = ["evaluate", "--out", str(tmp_path / "o"), "--config", str(config), "--qa", "1", "--edit", "1"]
    assert main([*args, "--estimate", "--no-progress"]) == 0
    assert "keyed" in capsys.readouterr().out
