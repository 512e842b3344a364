"""Fixtures for the installer tests: the Linux bundle, built once per source state.

    pytest_plugins = ("tests.installers_fixtures",)

- `linux_bundle` (session): installers.bundle_cache.cached_linux_bundle(): builds with
  `python installers/build.py linux` into build/bundle-cache/<hash of the sources>/ the first time
  (a few minutes on a 2-core machine), reuses it afterwards. The build time is in its BUILD_OK file.
- `run_bundled` (fixture): the function `run_bundled(exe, *args, home, timeout=..., **env)`: runs a bundled executable in a clean
  environment (no virtual environment, no PYTHONPATH, HOME in a temporary folder, Qt off-screen) and
  returns the CompletedProcess (stdout and stderr merged, as text).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from installers.bundle_cache import BuiltBundle, cached_linux_bundle, clean_env


@pytest.fixture(scope="session")
def linux_bundle() -> BuiltBundle:
    return cached_linux_bundle()


def _run_bundled(exe: Path, *args: str, home: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(exe), *args], env=clean_env(home, **env), cwd=home, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)


@pytest.fixture
def run_bundled():
    return _run_bundled
