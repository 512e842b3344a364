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


def _free_display() -> int:
    for n in range(90, 200):
        if not Path(f"/tmp/.X{n}-lock").exists() and not Path(f"/tmp/.X11-unix/X{n}").exists():
            return n
    raise RuntimeError("no free X display number between :90 and :199")


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    """Start Xvfb on a free display; yields ':N'. Stops exactly the server it started."""
    assert shutil.which("Xvfb"), "Xvfb is installed by scripts/dev.sh (apt package xvfb)"
    n = _free_display()
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1400x1000x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not Path(f"/tmp/.X11-unix/X{n}").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Xvfb :{n} did not start (exit {proc.poll()})")
            time.sleep(0.05)
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
