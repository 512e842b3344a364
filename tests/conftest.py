"""Shared test set-up. Tests never touch the network or a real adb server on port 5037."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# --- adb: no test reaches the user's server on 5037, nor starts one behind our back ----------------------
# The product starts an adb server on the standard address when none answers (harness.adbserver). In the
# suite the standard address is a port nothing listens on and starting is off; a test that exercises the
# start sets PHONEBUDDY_ADB_START, its own free port and its own HOME. Any connection to 5037 from this
# process raises, and tests/test_adb_server_owner.py asserts that these guards are in place.
ADB_DEFAULT_PORT = 5037
os.environ["PHONEBUDDY_ADB_START"] = "never"
# Each pytest-xdist worker inherits the controller's environment: a port chosen here (marked by
# _PB_TEST_ADB_PORT) is chosen again per worker, so no two workers share a "standard" address.
_chosen = os.environ.get("_PB_TEST_ADB_PORT")
if _chosen and os.environ.get("ANDROID_ADB_SERVER_PORT") == _chosen and os.environ.get("PYTEST_XDIST_WORKER"):
    del os.environ["ANDROID_ADB_SERVER_PORT"]
if os.environ.get("ANDROID_ADB_SERVER_PORT", "").strip() in ("", str(ADB_DEFAULT_PORT)):
    import socket as _socket

    with _socket.socket() as _s:
        _s.bind(("127.0.0.1", 0))
        os.environ["ANDROID_ADB_SERVER_PORT"] = os.environ["_PB_TEST_ADB_PORT"] = str(_s.getsockname()[1])


class TouchedDefaultAdbPort(AssertionError):
    """A test tried to reach port 5037, the user's own adb server."""


def _guard_default_adb_port() -> None:
    import socket

    if getattr(socket.socket.connect, "_pb_guard", False):
        return
    plain_connect, plain_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def _check(address) -> None:
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == ADB_DEFAULT_PORT:
            raise TouchedDefaultAdbPort(f"a test tried to connect to {address[0]}:{ADB_DEFAULT_PORT}")

    def connect(self, address):
        _check(address)
        return plain_connect(self, address)

    def connect_ex(self, address):
        _check(address)
        return plain_connect_ex(self, address)

    connect._pb_guard = True  # type: ignore[attr-defined]
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


_guard_default_adb_port()


def _tmpfs_mountable() -> bool:
    """Whether this process may mount a tmpfs (root, or a user namespace that allows it)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", where], capture_output=True)
        if done.returncode != 0:
            return False
        subprocess.run(["umount", "-l", where], capture_output=True)
        return True


_NOT_RUN: list[str] = []


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `tmpfs` are deselected where no tmpfs can be mounted, and the summary says so (never a
    silent skip). Under pytest-xdist (scripts/dev.sh runs 2 workers, whole files each), files with a `slow`
    test go first, so that a long file (the learning check, the bundle build) does not start last while the
    other worker sits idle. Files stay whole and in their own order; a plain one-process run is not reordered."""
    marked = [item for item in items if item.get_closest_marker("tmpfs")]
    if marked and not _tmpfs_mountable():
        config.hook.pytest_deselected(items=marked)
        items[:] = [item for item in items if not item.get_closest_marker("tmpfs")]
        _NOT_RUN.extend(item.nodeid for item in marked)
    if not hasattr(config, "workerinput"):
        return
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


def pytest_terminal_summary(terminalreporter, config) -> None:
    """Under pytest-xdist the workers deselect and this (controlling) process has no items: it checks the
    mount itself, so the line is printed either way."""
    if _NOT_RUN or (hasattr(config, "option") and getattr(config.option, "numprocesses", None)
                    and not _tmpfs_mountable()):
        terminalreporter.write_line("NOT RUN HERE: the tests marked tmpfs (tests/test_history_disk_full.py) "
                                    "were deselected: this process may not mount a tmpfs; run the suite as root "
                                    "to include them", yellow=True)
        for nodeid in _NOT_RUN:
            terminalreporter.write_line(f"  {nodeid}")
