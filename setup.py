"""Only what pyproject.toml cannot say: the top-level ``resources/`` folder (kept there by the
plugin's layout) ships inside the wheel as the package data of ``scoring.resources``, where
``scoring.paths`` finds it when there is no checkout around the package."""

import subprocess
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py


class BuildPyWithCommit(build_py):
    """Records the commit the wheel is built from (scoring/COMMIT), for `spatialgap --version`
    where no checkout is around the installed package."""

    def run(self) -> None:
        super().run()
        try:
            commit = subprocess.run(
                ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = "unknown"
        out = Path(self.build_lib) / "scoring" / "COMMIT"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(commit + "\n")


setup(
    cmdclass={"build_py": BuildPyWithCommit},
    packages=[
        *find_namespace_packages(include=["scoring", "scoring.*"], exclude=["*.__pycache__"]),
        "spatialgap",  # the inspect_ai tasks under the distribution's name (spatialgap/__init__.py)
        "scoring.resources",
    ],
    package_dir={"scoring.resources": "resources"},
    # py.typed: the package's annotations count for a user's type checker (PEP 561)
    package_data={
        "scoring": ["py.typed"],
        "spatialgap": ["py.typed"],
        "scoring.resources": ["**/*"],
        "scoring.adapters.lm_eval": ["*.yaml"],
    },
    exclude_package_data={"scoring.resources": ["**/__pycache__/*"]},
)
