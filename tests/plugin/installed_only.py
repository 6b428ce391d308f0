"""A pytest plugin (`-p tests.plugin.installed_only`): this Python holds only what the plugin's
installer installs, as QGIS's Python does after Plugins ▸ Install from ZIP and Install
dependencies…: every module of requirements.txt it leaves out fails to import, as if absent.

Loaded before collection, so the block covers every import the plugin's code paths make."""

from __future__ import annotations

import importlib.abc
import sys

# requirements.txt's runtime packages the installer never installs (plugin/install/deps.py
# REQUIRED lists what it does), and httpx, which nothing may need either.
NOT_INSTALLED = ("tqdm", "aiohttp", "httpx", "dask", "distributed", "pybase64", "deflate", "pyrosm")


class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in NOT_INSTALLED:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} (not installed by the plugin)", name=fullname
            )
        return None


def block() -> None:
    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in NOT_INSTALLED)
    if loaded:  # imported before the block: the test would prove nothing
        raise RuntimeError(f"already imported before the block: {loaded}")
    sys.meta_path.insert(0, NotInstalled())


block()


def pytest_terminal_summary(terminalreporter):
    # Printed even with -q: the parent test checks the block was in force.
    still = [m for m in NOT_INSTALLED if m in sys.modules]
    terminalreporter.write_line(
        f"installed-only: blocked {', '.join(NOT_INSTALLED)}; imported anyway: {still}"
    )
