"""API keys live only in the QGIS authentication database.

QGIS 3.22 has no API-header auth method, so a key is stored as the password of a Basic config;
the plugin builds the bearer header itself. Settings keep only the auth config id."""

from __future__ import annotations

from qgis.core import QgsApplication, QgsAuthMethodConfig

from scoring.errors import InputError

from ..utils.i18n import tr

USERNAME = "api-key"


def _manager():
    am = QgsApplication.authManager()
    if am is None or am.isDisabled():
        raise InputError("the QGIS authentication system is not available")
    return am


def store_key(name: str, key: str, authcfg: str | None = None) -> str:
    """Store (or replace) `key` under a Basic config; returns the auth config id."""
    am = _manager()
    cfg = QgsAuthMethodConfig("Basic")
    cfg.setName(f"Spatial Gap: {name}")
    cfg.setConfig("username", USERNAME)
    cfg.setConfig("password", key)
    if authcfg and authcfg in am.configIds():
        cfg.setId(authcfg)
        ok = am.updateAuthenticationConfig(cfg)
    else:
        res = am.storeAuthenticationConfig(cfg)
        ok, cfg = (res[0], res[1]) if isinstance(res, tuple) else (res, cfg)
    if not ok or not cfg.id():
        raise InputError(
            "cannot store the key in the QGIS authentication database " "(is the master password set?)"
        )
    return cfg.id()


def read_key(authcfg: str | None) -> str | None:
    """The key stored under `authcfg` (None when no config is given)."""
    if not authcfg:
        return None
    am = _manager()
    cfg = QgsAuthMethodConfig()
    res = am.loadAuthenticationConfig(authcfg, cfg, True)
    ok, cfg = (res[0], res[1]) if isinstance(res, tuple) else (res, cfg)
    if not ok:
        raise InputError(
            tr(
                "The endpoint's API key cannot be read: the QGIS master password was not entered, "
                "or the key's entry is gone (store it again in Endpoints…)."
            )
        )
    return cfg.config("password") or None


def remove_key(authcfg: str) -> bool:
    return bool(_manager().removeAuthenticationConfig(authcfg))


class AuthKeyProvider:
    """scoring.runner.config.KeyProvider reading keys from the QGIS auth database."""

    def __init__(self, authcfg_by_model: dict[str, str | None]):
        self._ids = dict(authcfg_by_model)

    def get_key(self, spec) -> str | None:
        return read_key(self._ids.get(spec.name))

    def __repr__(self) -> str:
        return "AuthKeyProvider(<auth database>)"
