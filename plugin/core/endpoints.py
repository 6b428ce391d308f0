"""Model endpoints as plugin settings: the runner's ModelSpec fields plus an auth config id."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from qgis.core import QgsSettings

from scoring.runner.config import ModelSpec

KEY = "spatialgap/endpoints"


@dataclass
class Endpoint:
    name: str
    kind: str = "openai"
    base_url: str = "http://127.0.0.1:8765/v1"
    model: str = "chance"
    authcfg: str = ""  # QGIS auth config id; the key itself is never in settings
    timeout_s: float = 120.0
    concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int = 1024
    # Per million tokens in / out: the cost asked about before a filtered set is sent.
    price_in: float | None = None
    price_out: float | None = None
    extra: dict = field(default_factory=dict)

    def spec(self) -> ModelSpec:
        spec = ModelSpec(
            name=self.name,
            kind=self.kind,
            base_url=self.base_url.strip(),
            model=self.model.strip(),
            timeout_s=float(self.timeout_s),
            concurrency=int(self.concurrency),
            temperature=float(self.temperature),
            max_tokens=int(self.max_tokens),
            **{"price_in": self.price_in, "price_out": self.price_out, **self.extra},
        )
        spec.validate(f"endpoint {self.name}")
        return spec


def load_endpoints(settings: QgsSettings | None = None) -> list[Endpoint]:
    s = settings or QgsSettings()
    raw = s.value(KEY, "[]")
    try:
        items = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        items = []
    out = []
    for d in items:
        try:
            out.append(Endpoint(**d))
        except TypeError:
            continue
    return out


def save_endpoints(endpoints: list[Endpoint], settings: QgsSettings | None = None) -> None:
    s = settings or QgsSettings()
    s.setValue(KEY, json.dumps([asdict(e) for e in endpoints]))
