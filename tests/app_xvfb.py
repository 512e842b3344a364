"""Helpers for the tests that need a real X server: an Xvfb display started and stopped by its own PID,
and the AT-SPI accessibility bus (inside dbus-run-session) that screen readers such as Orca read."""

from __future__ import annotations

import contextlib
import os
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


def _serving(proc: subprocess.Popen, n: int) -> bool:
    """Our Xvfb owns display n (its pid is in the lock file, not another server's) and has its socket."""
    try:
        owner = int(Path(f"/tmp/.X{n}-lock").read_text().strip() or 0)
    except (OSError, ValueError):
        return False
    return owner == proc.pid and Path(f"/tmp/.X11-unix/X{n}").exists()


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    """Start Xvfb on a free display; yields ':N'. Stops exactly the server it started."""
    assert shutil.which("Xvfb"), "Xvfb is installed by scripts/dev.sh (apt package xvfb)"
    proc = n = None
    # Two processes can pick the same free-looking number at once; Xvfb's own lock file decides, and the
    # one that loses exits at once ("server is already active"), so it tries the next number.
    for n in _candidate_displays():
        proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1400x1000x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while not _serving(proc, n) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            break
    if proc is None or proc.poll() is not None:
        raise RuntimeError(f"Xvfb did not start on any free display between :90 and :199 (last exit {proc and proc.poll()})")
    try:
        if not _serving(proc, n):
            raise RuntimeError(f"Xvfb :{n} did not open its socket within 15 s")
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
