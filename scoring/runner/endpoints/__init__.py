"""Endpoint kinds as a registry: each kind is one module that registers an `EndpointKind`
record, naming the paths it posts to and lists models at, how a request body is built from
OpenAI-style messages and how a 2xx reply is read. The config validates `kind` against this
registry, the client builds and reads requests through it, and the plugin's connection test
lists models through it; nothing else knows a kind by name.

A new kind is one module (it calls `base.register(EndpointKind(...))`) and its name in `MODULES`
(tests/walkthroughs/test_new_endpoint_kind.py shows one: the OpenAI Responses API).

>>> from scoring.runner.endpoints import endpoint_kinds
>>> list(endpoint_kinds())
['openai', 'ollama']
>>> endpoint_kinds()["openai"].chat_path
'/chat/completions'
>>> endpoint_kinds()["olama"]
Traceback (most recent call last):
...
scoring.support.registry.UnknownNameError: unknown endpoint kind 'olama' (did you mean ollama?)
"""

from __future__ import annotations

import importlib

from scoring.runner.endpoints.base import ENDPOINT_KINDS, EndpointKind, Reply, ReplyError
from scoring.support.registry import Registry

# The modules that register endpoint kinds, in this order (the first is the default kind).
MODULES = ("scoring.runner.endpoints.openai", "scoring.runner.endpoints.ollama")


def endpoint_kinds() -> Registry[EndpointKind]:
    """Every registered kind, the modules of `MODULES` imported first (once; read at call time,
    so a kind named there later is loaded on the next call)."""
    for module in MODULES:
        importlib.import_module(module)
    return ENDPOINT_KINDS


endpoint_kinds()

__all__ = ["ENDPOINT_KINDS", "MODULES", "EndpointKind", "Reply", "ReplyError", "endpoint_kinds"]
