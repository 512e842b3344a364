"""Benchmark the ADB path on the simulated phone: observation latency through screencap versus the
mirror's freshest scrcpy frame (their ratio), action latency, and harness overhead per step.

    .venv/bin/python bench/bench_adb.py [--repeats 15]

Starts its own adb server (private port) and the simulated phone in a separate process
(`phonebuddy world serve`, so the phone's rendering and video encoding do not share this process's
GIL, as a real phone would not); prints medians (and p90) in milliseconds.
Targets from the issue (printed next to the figures, never asserted): mirror observation >= 10x faster
than screencap, harness overhead < 50 ms a step.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_core.types import Action
from harness.adb import AdbDevice, connect
from harness.adbserver import AdbServer, free_port
from harness.mirror import Mirror, MirrorFrame
from harness.phoneworld import SimDevice, World


def measure(fn: Callable[[], object], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def show(name: str, times: list[float]) -> float:
    med = statistics.median(times)
    p90 = sorted(times)[int(0.9 * (len(times) - 1))]
    print(f"  {name:<52} median {med:8.1f} ms   p90 {p90:8.1f} ms   (n={len(times)})")
    return med


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    n = args.repeats
    port = free_port()
    root = Path(__file__).resolve().parents[1]
    server = AdbServer().start()
    try:
        phone_proc = subprocess.Popen(
            [sys.executable, "-m", "phonebuddy.cli", "world", "serve", "--port", str(port)],
            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
    except OSError:
        server.stop()
        raise
    address = f"127.0.0.1:{port}"
    try:
        phone_proc.stdout.readline()  # "PhoneWorld-lite ... listening on ..."
        client = server.client()
        connect(client, address)
        server.wait_state(address)
        device = AdbDevice(client, address)
        device.observe()  # warm caches (wm size, features)

        print("Observation (1080x2400 simulated phone, real adb server 36, adbutils 2.12)")
        png = show("screencap -p, validated PNG (capture only)", measure(device.capture_png, n))
        raw = show("screencap raw RGBA (exec:screencap)", measure(lambda: device.exec_out("screencap", 10), n))
        obs_cap = show("observe(): dumpsys + UI tree + screencap", measure(device.observe, n))
        tree_only = AdbDevice(client, address, ui_tree=True)
        tree_only.window_size()
        state_tree = show("  of which dumpsys + uiautomator dump (one shell call)",
                          measure(lambda: tree_only.shell("dumpsys window; dumpsys power; uiautomator dump /data/local/tmp/b.xml >/dev/null && cat /data/local/tmp/b.xml"), n))

        mirror = Mirror(client.device(address)).start()
        try:
            device_m = AdbDevice(client, address, mirror=mirror)
            show("mirror: freshest frame handle (latest(), no conversion)", measure(mirror.latest, n))
            fresh = show("mirror: freshest frame as a PIL image (a new conversion)",
                         measure(lambda: MirrorFrame(mirror.latest().array, 0.0, 0.0, 0).image, n))
            obs_mirror = show("observe() with the mirror: dumpsys + UI tree + frame", measure(device_m.observe, n))

            def tap_then_fresh_frame() -> None:
                before = time.monotonic()
                device_m.act(Action.press("recents"))  # toggle Overview: the screen changes
                mirror.wait_frame(after=before + 0.15, timeout=5)  # the AdbDevice settle time

            post = show("mirror: key -> first frame decoded >= 150 ms later", measure(tap_then_fresh_frame, n))
            print(f"  ratio screencap PNG / freshest mirror frame: {png / max(fresh, 1e-6):8.0f}x  (target >= 10x)")
            print(f"  ratio screencap PNG / frame after a change:  {png / max(post, 1e-6):8.1f}x")
            print(f"  ratio observe() screencap / observe() mirror: {obs_cap / max(obs_mirror, 1e-6):8.1f}x")
            device.act(Action.press("home"))
        finally:
            mirror.stop()

        print("Actions through AdbDevice.act (one adb round trip each unless noted)")
        tap = show("click (input tap) on an empty spot", measure(lambda: device.act(Action.click(540, 1700)), n))
        show("button_press back", measure(lambda: device.act(Action.press("back")), n))
        show("scroll (input swipe)", measure(lambda: device.act(Action.scroll(540, 1800, 540, 900)), n))
        device.act(Action.open_app("Browser"))
        url_bar = next(e for e in device.observe().elements if e.text == "Search or type web address")
        device.act(Action.click(*url_bar.center))
        show("type ASCII 'hello world' (input text)", measure(lambda: device.act(Action.type_text("hello world")), n))
        show("type Chinese '你好世界' (ADBKeyboard: 5 commands)", measure(lambda: device.act(Action.type_text("你好世界")), n))
        show("open_app by name (resolve-activity + am start)", measure(lambda: device.act(Action.open_app("设置")), n))

        print("Harness overhead per step: observe + act, the model's think time (0.3 s) not counted")
        twin = World(seed=0)
        sim = SimDevice(twin)

        def step_times(observe: Callable[[], object], act: Callable[[], object]) -> list[float]:
            times = []
            for _ in range(n):
                time.sleep(0.3)  # the policy thinking between act and the next observation
                start = time.perf_counter()
                observe()
                act()
                times.append((time.perf_counter() - start) * 1000)
            return times

        recents = Action.press("recents")
        sim_ms = show("SimDevice step (in-process, with screenshot)", step_times(sim.observe, lambda: sim.act(recents)))
        adb_ms = show("AdbDevice step via screencap", step_times(device.observe, lambda: device.act(recents)))
        mirror = Mirror(client.device(address)).start()
        try:
            device_m = AdbDevice(client, address, mirror=mirror)
            adb_m = show("AdbDevice step via mirror", step_times(device_m.observe, lambda: device_m.act(recents)))
            lean = AdbDevice(client, address, mirror=mirror, ui_tree=False)
            lean_ms = show("AdbDevice step via mirror, no UI tree", step_times(lean.observe, lambda: lean.act(recents)))

            def right_after() -> None:
                device_m.act(recents)
                device_m.observe()

            show("act then observe at once (waits for a settled frame)", measure(right_after, n))
        finally:
            mirror.stop()
        print(f"  overhead over in-process: screencap {adb_ms - sim_ms:6.1f} ms, mirror {adb_m - sim_ms:6.1f} ms, "
              f"mirror without UI tree {lean_ms - sim_ms:6.1f} ms a step  (target < 50 ms)")
        print(f"  (for reference: tap round trip {tap:.1f} ms, raw capture {raw:.1f} ms, dumpsys+tree {state_tree:.1f} ms)")
    finally:
        phone_proc.terminate()
        phone_proc.wait(10)
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
