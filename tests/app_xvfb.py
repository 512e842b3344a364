"""Helpers for the tests that need a real X server: an Xvfb display started and stopped by its own PID,
and the AT-SPI accessibility bus (inside dbus-run-session) that screen readers such as Orca read."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _candidate_displays() -> Iterator[int]:
    """Display numbers :90..:199 that look free, starting at a per-worker offset so that parallel test
    workers (pytest-xdist sets PYTEST_XDIST_WORKER=gwN) and other sessions rarely try the same one."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    offset = (int(worker) * 20 if worker.isdigit() else 0) % 110
    for i in range(110):
        n = 90 + (offset + i) % 110
        if not Path(f"/tmp/.X{n}-lock").exists() and not Path(f"/tmp/.X11-unix/X{n}").exists():
            yield n


def _ready(proc: subprocess.Popen, ready_fd: int, n: int, timeout: float = 15.0) -> bool:
    """Whether our Xvfb came up on display n and is ready to accept clients: it writes the display number
    to `-displayfd` just before it starts serving (xorg-server's NotifyParentProcess). The lock file and
    socket appear earlier, so a client that connected when they existed was once refused on CI ("could
    not connect to display :90"). End of file on the pipe: the server exited (it lost display n)."""
    got = b""
    deadline = time.monotonic() + timeout
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([ready_fd], [], [], left)[0]:
            return False
        chunk = os.read(ready_fd, 16)
        if not chunk:
            return False
        got += chunk
    return got.strip() == str(n).encode() and proc.poll() is None


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    """Start Xvfb on a free display; yields ':N' once the server accepts clients. Stops exactly the server it
    started."""
    assert shutil.which("Xvfb"), "Xvfb is installed by scripts/dev.sh (apt package xvfb)"
    proc = n = None
    ready = False
    # Two processes can pick the same free-looking number at once; Xvfb's own lock file decides, and the
    # one that loses exits at once ("server is already active"), so it tries the next number.
    for n in _candidate_displays():
        read_fd, write_fd = os.pipe()
        try:
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1400x1000x24", "-nolisten", "tcp",
                                     "-displayfd", str(write_fd)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
        finally:
            os.close(write_fd)  # the server holds its own copy: end of file when it exits
        try:
            ready = _ready(proc, read_fd, n)
        finally:
            os.close(read_fd)
        if ready or proc.poll() is None:
            break
    if proc is None or not ready:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        raise RuntimeError(f"Xvfb did not start on any free display between :90 and :199, or did not say it was "
                           f"ready within 15 s (last exit {proc and proc.poll()})")
    try:
        yield f":{n}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def xcb_env(display: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", **extra)
    env.pop("QT_SCALE_FACTOR", None)
    return env


# Shell: wait (up to 10 s) until the AT-SPI bus launcher started just before owns org.a11y.Bus on the
# session bus, instead of a fixed `sleep 1` that a busy machine (or two test workers) can outlast: an
# app started before the bus is there never joins it, and the screen reader side then finds nothing.
ATSPI_BUS_UP = (
    "for _ in $(seq 200); do dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.NameHasOwner string:org.a11y.Bus 2>/dev/null | grep -q 'boolean true' && break; "
    "sleep 0.05; done; "
)
