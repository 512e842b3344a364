"""Benchmark the ADB path on the simulated phone: observation latency through screencap versus the
mirror's freshest scrcpy frame (their ratio), action latency, and harness overhead per step.

    .venv/bin/python bench/bench_adb.py [--repeats 15]

Starts its own adb server (private port) and a SimPhone; prints medians (and p90) in milliseconds.
Targets from the issue (printed next to the figures, never asserted): mirror observation >= 10x faster
than screencap, harness overhead < 50 ms a step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_core.types import Action  # noqa: E402
from harness.adb import AdbDevice, connect  # noqa: E402
from harness.adbserver import AdbServer  # noqa: E402
from harness.mirror import Mirror  # noqa: E402
from harness.phoneworld import SimDevice, World  # noqa: E402
from harness.phoneworld.phone import SimPhone  # noqa: E402


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
    server = AdbServer().start()
    phone = SimPhone(World(seed=0)).start()
    try:
        client = server.client()
        connect(client, phone.address)
        server.wait_state(phone.address)
        device = AdbDevice(client, phone.address)
        device.observe()  # warm caches (wm size, features)

        print("Observation (1080x2400 simulated phone, real adb server 36, adbutils 2.12)")
        png = show("screencap -p, validated PNG (capture only)", measure(device.capture_png, n))
        raw = show("screencap raw RGBA (exec:screencap)", measure(lambda: device.exec_out("screencap", 10), n))
        obs_cap = show("observe(): dumpsys + UI tree + screencap", measure(device.observe, n))
        tree_only = AdbDevice(client, phone.address, ui_tree=True)
        tree_only.window_size()
        state_tree = show("  of which dumpsys + uiautomator dump (one shell call)",
                          measure(lambda: tree_only.shell("dumpsys window; dumpsys power; uiautomator dump /data/local/tmp/b.xml >/dev/null && cat /data/local/tmp/b.xml"), n))

        mirror = Mirror(client.device(phone.address)).start()
        try:
            device_m = AdbDevice(client, phone.address, mirror=mirror)
            fresh = show("mirror: freshest frame as a PIL image", measure(lambda: mirror.latest().image, n))
            obs_mirror = show("observe() with the mirror: dumpsys + UI tree + frame", measure(device_m.observe, n))

            icon = phone.world.find("Settings").center

            def tap_then_fresh_frame() -> None:
                before = time.monotonic()
                with phone.lock:
                    phone.world.key(187)  # toggle Overview: the screen changes
                mirror.wait_frame(after=before, timeout=5)

            post = show("mirror: screen change -> decoded frame (encode+send+decode)", measure(tap_then_fresh_frame, n))
            print(f"  ratio screencap PNG / freshest mirror frame: {png / max(fresh, 1e-6):8.0f}x  (target >= 10x)")
            print(f"  ratio screencap PNG / frame after a change:  {png / max(post, 1e-6):8.1f}x")
            print(f"  ratio observe() screencap / observe() mirror: {obs_cap / max(obs_mirror, 1e-6):8.1f}x")
            with phone.lock:
                phone.world.key(3)
        finally:
            mirror.stop()

        print("Actions through AdbDevice.act (one adb round trip each unless noted)")
        x, y = icon
        tap = show("click (input tap) on an empty spot", measure(lambda: device.act(Action.click(540, 1700)), n))
        show("button_press back", measure(lambda: device.act(Action.press("back")), n))
        show("scroll (input swipe)", measure(lambda: device.act(Action.scroll(540, 1800, 540, 900)), n))
        with phone.lock:
            phone.world.launch("com.android.browser")
            bx, by = phone.world.find("Search or type web address").center
        device.act(Action.click(bx, by))
        show("type ASCII 'hello world' (input text)", measure(lambda: device.act(Action.type_text("hello world")), n))
        show("type Chinese '你好世界' (ADBKeyboard: 5 commands)", measure(lambda: device.act(Action.type_text("你好世界")), n))
        show("open_app by name (resolve-activity + am start)", measure(lambda: device.act(Action.open_app("设置")), n))

        print("Harness overhead per step (AdbDevice minus in-process SimDevice, same observe + recents key)")
        twin = World(seed=0)
        sim = SimDevice(twin)

        def sim_step() -> None:
            sim.observe()
            sim.act(Action.press("recents"))

        def adb_step() -> None:
            device.observe()
            device.act(Action.press("recents"))

        sim_ms = show("SimDevice step (observe with screenshot + click)", measure(sim_step, n))
        adb_ms = show("AdbDevice step via screencap (observe + recents key)", measure(adb_step, n))
        print(f"  overhead via screencap: {adb_ms - sim_ms:8.1f} ms a step")
        mirror = Mirror(client.device(phone.address)).start()
        try:
            device_m = AdbDevice(client, phone.address, mirror=mirror)

            def adb_mirror_step() -> None:
                device_m.observe()
                device_m.act(Action.press("recents"))

            adb_m = show("AdbDevice step via mirror (observe + recents key)", measure(adb_mirror_step, n))
            lean = AdbDevice(client, phone.address, mirror=mirror, ui_tree=False)

            def lean_step() -> None:
                lean.observe()
                lean.act(Action.press("recents"))

            lean_ms = show("AdbDevice step via mirror, no UI tree", measure(lean_step, n))
            print(f"  overhead via mirror: {adb_m - sim_ms:8.1f} ms a step; without the UI tree {lean_ms - sim_ms:8.1f} ms"
                  "  (target < 50 ms)")
        finally:
            mirror.stop()
        print(f"  (for reference: tap round trip {tap:.1f} ms, raw capture {raw:.1f} ms, dumpsys+tree {state_tree:.1f} ms)")
    finally:
        phone.stop()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
