"""How soon the phone's lifecycle is noticed: the adb server started by PhoneBuddy, and the device
watcher's events (harness.devicewatch) for a Wi-Fi phone pulled out, back, and the server killed.

    .venv/bin/python bench/bench_phone_events.py [--repeats 5]

Runs as a user's machine would, but on a free port (never 5037) with HOME in a temporary folder; the
server it starts is killed by pid at the end. The phone is PhoneWorld-lite in this process, over the
real ADB protocol. Prints medians and maxima in seconds; the issue's target (a change announced within
2 s) is printed next to them, never asserted.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.adbserver import AdbServerOwner, free_port, server_pids
from harness.devicewatch import DeviceWatcher, PhoneEventKind
from harness.phoneworld.phone import SimPhone
from harness.phoneworld.world import World


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    home = tempfile.mkdtemp(prefix="pb-bench-home-")
    port = free_port()
    env = dict(os.environ, HOME=home, ANDROID_USER_HOME=f"{home}/.android", ANDROID_ADB_SERVER_PORT=str(port),
               PHONEBUDDY_ADB_START="auto")
    events: queue.Queue = queue.Queue()
    owner = AdbServerOwner(env=env)

    def wait(test, timeout: float = 30.0) -> float:
        t0 = time.monotonic()
        while True:
            event = events.get(timeout=max(0.01, timeout - (time.monotonic() - t0)))
            if test(event):
                return time.monotonic() - t0

    def state(s: str):
        return lambda e: e.device is not None and e.device.state == s

    t0 = time.monotonic()
    owner.ensure()
    start_s = time.monotonic() - t0
    watcher = DeviceWatcher(owner, events.put).start()
    phone = SimPhone(World(seed=0)).start()
    figures: dict[str, list[float]] = {"pulled out": [], "back": [], "server lost": [], "server back + phone": []}
    try:
        watcher.wait_synced(30)
        owner.remember(phone.address)
        owner.ensure().connect(phone.address)
        wait(state("device"))
        for _ in range(args.repeats):
            t0 = time.monotonic()
            phone.adbd.stop()
            wait(state("offline"))
            figures["pulled out"].append(time.monotonic() - t0)
            t0 = time.monotonic()
            phone.adbd.restart()
            wait(state("device"))
            figures["back"].append(time.monotonic() - t0)
            t0 = time.monotonic()
            for pid in server_pids(port):
                os.kill(pid, signal.SIGKILL)
            wait(lambda e: e.kind is PhoneEventKind.SERVER_LOST)
            figures["server lost"].append(time.monotonic() - t0)
            wait(state("device"), timeout=60)
            figures["server back + phone"].append(time.monotonic() - t0)
    finally:
        watcher.stop()
        phone.stop()
        for pid in server_pids(port):
            os.kill(pid, signal.SIGKILL)
    print(f"adb server start (adb start-server, none running): {start_s:.2f} s")
    for name, values in figures.items():
        print(f"{name:22s} median {statistics.median(values):.2f} s  max {max(values):.2f} s  (n={len(values)})")
    print("target: a plug or unplug announced within 2 s (the window adds its 0.3 s coalescing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
