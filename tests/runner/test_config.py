import pytest
from runner_helpers import FAKE_KEY

from scoring.errors import InputError
from scoring.runner.config import (
    ConfigError,
    EnvKeyProvider,
    ModelSpec,
    Redactor,
    StaticKeyProvider,
    get_model,
    load_config,
)

GOOD = """
[models.qwen]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1/"
model = "Qwen2.5-VL-7B"
api_key_env = "QWEN_KEY"
temperature = 0.2
max_tokens = 512
seed = 7
top_p = 0.9
concurrency = 16
timeout_s = 60
max_retries = 4
image_detail = "low"

[models.local]
kind = "ollama"
base_url = "http://localhost:11434"
model = "llava"
"""


def test_load_config(tmp_path):
    p = tmp_path / "models.toml"
    p.write_text(GOOD)
    specs = load_config(p)
    assert set(specs) == {"qwen", "local"}
    q = specs["qwen"]
    assert q.url == "http://127.0.0.1:8000/v1/chat/completions"
    assert (q.temperature, q.max_tokens, q.seed, q.top_p, q.concurrency, q.image_detail) == (
        0.2,
        512,
        7,
        0.9,
        16,
        "low",
    )
    assert specs["local"].url == "http://localhost:11434/api/chat"
    assert get_model(p, "local").model == "llava"
    with pytest.raises(ConfigError, match="models.nope"):
        get_model(p, "nope")


@pytest.mark.parametrize(
    "line,field",
    [
        ('kind = "grpc"', "kind"),
        ("temperature = 'hot'", "temperature"),
        ("concurrency = 0", "concurrency"),
        ("max_tokens = 1.5", "max_tokens"),
        ('base_url = "ftp://x"', "base_url"),
        ("colour = 1", "colour"),
        ('image_detail = "ultra"', "image_detail"),
        ("top_p = 2", "top_p"),
    ],
)
def test_validation_names_field(tmp_path, line, field):
    p = tmp_path / "m.toml"
    base = {"kind": 'kind = "openai"', "base_url": 'base_url = "http://h/v1"'}
    body = ['model = "m"']
    key = line.split("=")[0].strip()
    for k, v in base.items():
        if k != key:
            body.append(v)
    body.append(line)
    p.write_text("[models.m]\n" + "\n".join(body) + "\n")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert f"models.m.{field}" in msg and "\n" not in msg
    assert isinstance(ei.value, InputError)


def test_key_pasted_into_api_key_env_is_not_echoed(tmp_path):
    p = tmp_path / "m.toml"
    p.write_text(f'[models.m]\nkind="openai"\nbase_url="http://h/v1"\nmodel="m"\napi_key_env="{FAKE_KEY}"\n')
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    assert "api_key_env" in str(ei.value) and FAKE_KEY not in str(ei.value)


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[models.m\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="models.m.model: missing"):
        bad.write_text('[models.m]\nkind="openai"\nbase_url="http://h"\n')
        load_config(bad)


def test_from_endpoint_and_keys():
    spec = ModelSpec.from_endpoint("http://127.0.0.1:9/v1", "m", "MY_KEY", concurrency=3)
    assert spec.kind == "openai" and spec.concurrency == 3 and spec.name == "m"
    assert FAKE_KEY not in repr(spec)
    with pytest.raises(ConfigError, match="endpoint.base_url"):
        ModelSpec.from_endpoint("127.0.0.1:9", "m")
    with pytest.raises(ConfigError, match="credentials"):
        ModelSpec.from_endpoint(f"http://u:{FAKE_KEY}@h/v1", "m")
    assert EnvKeyProvider({"MY_KEY": FAKE_KEY}).get_key(spec) == FAKE_KEY
    with pytest.raises(ConfigError, match="MY_KEY is not set"):
        EnvKeyProvider({}).get_key(spec)
    assert EnvKeyProvider({}).get_key(ModelSpec.from_endpoint("http://h/v1", "m")) is None
    assert FAKE_KEY not in repr(StaticKeyProvider(FAKE_KEY))
    r = Redactor([FAKE_KEY])
    assert r.value({"a": [f"Bearer {FAKE_KEY}"]}) == {"a": ["Bearer <redacted>"]}
