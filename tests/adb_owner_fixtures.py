"""A user's machine with no adb server yet, for tests of the product's own server (harness.adbserver):
a free port instead of 5037, HOME / ANDROID_USER_HOME / XDG_DATA_HOME in the test's tmp_path, starting
allowed. Whatever adb server the product started there is killed by its process id afterwards.

    pytest_plugins = ("tests.adb_owner_fixtures",)    # then: def test_x(user_env, server_pids): ...

`server_pids(port)` lists the adb server processes on a port (the fixture of that name hands it out).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from harness.adbserver import ServerProbe, free_port, probe_server
from harness.adbserver import server_pids as adb_server_pids

ROOT = Path(__file__).resolve().parents[1]


def _kill_server(port: int) -> None:
    for pid in adb_server_pids(port):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while adb_server_pids(port) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def user_env(tmp_path):
    """The environment (a dict, for subprocesses and AdbServerOwner(env=...)); see the module docstring."""
    port = free_port()
    assert port != 5037
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), ANDROID_USER_HOME=str(home / ".android"),
               ANDROID_ADB_SERVER_PORT=str(port), PHONEBUDDY_ADB_START="auto", PYTHONPATH=str(ROOT),
               XDG_DATA_HOME=str(home / ".local" / "share"))
    env.pop("ANDROID_ADB_SERVER_ADDRESS", None)
    assert probe_server("127.0.0.1", port) is ServerProbe.NONE
    yield env
    _kill_server(port)
    assert adb_server_pids(port) == []


@pytest.fixture
def server_pids():
    return adb_server_pids
