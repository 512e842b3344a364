"""`phonebuddy world capture` and `phonebuddy world serve --app` as a caregiver runs them, and `--record`
(following a caregiver who navigates on the mirror), all through the real adb server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.adb import AdbDevice, connect
from harness.phoneworld import cli
from harness.phoneworld.apps.captured import load_captured
from harness.phoneworld.capture import record_caregiver
from harness.phoneworld.device import SimDevice
from harness.phoneworld.world import World

pytest_plugins = ("tests.adb_fixtures",)
ROOT = Path(__file__).resolve().parent.parent


def test_capture_command_prints_the_summary_and_writes_the_app(attach, adb_server, tmp_path, capsys):
    world = World(seed=0)
    out = tmp_path / "settings"
    with attach(world) as phone:
        code = cli.main(["capture", "--adb-port", str(adb_server.port), "--serial", phone.address,
                         "--package", "com.android.settings", "--out", str(out), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["screens"] >= 6 and summary["edges"] >= 10 and summary["skipped_sensitive"] >= 1
    assert summary["seconds"] > 0
    spec = json.loads((out / "app.json").read_text(encoding="utf-8"))
    assert spec["package"] == "com.android.settings" and len(spec["screens"]) == summary["screens"]
    assert world.sensitive_events == []
    # In words, in Chinese, and stopped by a small step budget: it says so.
    with attach(World(seed=0)) as phone:
        code = cli.main(["capture", "--adb-port", str(adb_server.port), "--serial", phone.address, "--lang", "zh",
                         "--package", "com.android.settings", "--out", str(tmp_path / "small"), "--max-steps", "5"])
    printed = capsys.readouterr().out
    assert code == 0 and "个界面" in printed and "预算已用完" in printed


def test_capture_command_bad_input_is_said_plainly(attach, adb_server, tmp_path, capsys):
    assert cli.main(["capture", "--package", "x", "--out", str(tmp_path), "--max-steps", "0"]) == 2
    err = capsys.readouterr().err
    assert "--max-steps must be a positive number" in err and "Traceback" not in err
    with attach(World(seed=0)) as phone:
        code = cli.main(["capture", "--adb-port", str(adb_server.port), "--serial", phone.address,
                         "--package", "com.example.nothere", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 1 and "nothere" in err and "Traceback" not in err and "Error" not in err
    assert cli.main(["serve", "--port", "0", "--app", str(tmp_path / "missing")]) == 2
    assert "no captured app" in capsys.readouterr().err


def test_serve_app_serves_the_captured_app_over_adb(adb_server, tmp_path):
    # Capture in-process, then edit the declarative app as a developer would (a new title).
    world = World(seed=0)
    from harness.phoneworld.capture import capture_app

    capture_app(SimDevice(world), "com.phoneworld.shop", tmp_path, names=[])
    spec = json.loads((tmp_path / "app.json").read_text(encoding="utf-8"))
    title = next(e for e in spec["screens"][0]["elements"] if e["role"] == "title")
    title["text"] = "My captured shop"
    (tmp_path / "app.json").write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phonebuddy", "world", "serve", "--port", "0", "--app", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on" in line, line + proc.stderr.read()
        address = line.rsplit(" ", 1)[-1].strip()
        client = adb_server.client()
        connect(client, address)
        assert adb_server.wait_state(address) == "device"
        device = AdbDevice(client, address, reconnect_grace_s=3.0)
        try:
            from assistant_core.types import Action

            device.act(Action.open_app("com.phoneworld.shop"))
            obs = device.observe()
            assert obs.foreground == "com.phoneworld.shop"
            assert any(e.text == "My captured shop" for e in obs.elements)
            reading = next(e for e in obs.elements if e.text == "Reading glasses")
            device.act(Action.click(*reading.center))
            assert any(e.text == "Add to cart" for e in device.observe().elements)
        finally:
            device.close()
            client.disconnect(address)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_record_follows_a_caregiver_on_the_mirror(attach, adb_server, tmp_path):
    world = World(seed=0)
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        # What the caregiver does between two looks at the screen (their taps reach the phone).
        script = [
            lambda: world.launch("com.android.settings"),
            lambda: world.tap_text("Wi-Fi"),
            lambda: world.key("BACK"),
            lambda: world.tap_text("Display"),
            lambda: world.tap_text("Font size"),
        ]
        ticks = [0.0]

        def sleep(_s: float) -> None:
            ticks[0] += 1
            if script:
                with phone.lock:
                    script.pop(0)()

        try:
            result = record_caregiver(device, "com.android.settings", tmp_path, max_seconds=8, poll_s=0,
                                      clock=lambda: ticks[0], sleep=sleep)
        finally:
            device.close()
    titles = [s.title for s in result.screens]
    assert titles == ["Settings", "Wi-Fi", "Display", "Font size"]
    steps = {(e["from"], e["to"]): e["element"] for e in result.edges}
    assert steps[("s0", "s1")].startswith("com.android.settings:id/wifi_settings|Wi-Fi")
    assert steps[("s2", "s3")].startswith("com.android.settings:id/font_size|")
    assert ("s1", "s0") in steps  # Back is recorded too (no element: nothing was tapped)
    # The recording is a mock app like any capture: loaded, a tap on Display then Font size follows it.
    mock = World(seed=0)
    load_captured(mock, tmp_path)
    mock.launch("com.android.settings")
    assert mock.tap_text("Wi-Fi")
    assert mock.foreground[1].endswith("WifiActivity")


def test_the_mirror_shows_and_drives_a_captured_app(attach, adb_server, tmp_path):
    """The mirror (scrcpy over the real adb server) works on a captured app unchanged: its frames are the
    captured app's screen and a tap through the control channel follows a recorded edge."""
    import time

    from harness.mirror import Mirror
    from harness.phoneworld.capture import capture_app

    capture_app(SimDevice(World(seed=0)), "com.android.settings", tmp_path, names=[])
    world = World(seed=0)
    load_captured(world, tmp_path)
    world.launch("com.android.settings")
    with attach(world) as phone:
        mirror = Mirror(adb_server.client().device(phone.address), max_size=800).start()
        try:
            with phone.lock:
                x, y = world.find("Display").center
            mirror.tap(x, y)
            deadline = time.monotonic() + 5
            while not world.foreground[1].endswith("DisplayActivity") and time.monotonic() < deadline:
                time.sleep(0.02)
            assert world.foreground[1].endswith("DisplayActivity")
            import numpy as np

            def off(frame) -> float:  # mean pixel difference between the stream and the phone's screen
                with phone.lock:
                    shot = world.screenshot().resize((frame.width, frame.height))
                return float(np.abs(np.asarray(frame.image, np.int16) - np.asarray(shot, np.int16)).mean())

            deadline = time.monotonic() + 5  # frames in flight show the old screen; the new one follows
            while off(mirror.latest()) >= 4.0 and time.monotonic() < deadline:
                mirror.wait_frame(after=mirror.latest().monotonic, timeout=1)
            assert off(mirror.latest()) < 4.0  # the stream shows the captured app's Display screen
        finally:
            mirror.stop()
