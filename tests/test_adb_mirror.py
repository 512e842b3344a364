"""Mirroring over the scrcpy 3.3.4 protocol (muti-scrcpy-client) from the simulated phone."""

from __future__ import annotations

import time

import numpy as np

from assistant_core.types import Action
from harness.adb import AdbDevice
from harness.mirror import Mirror
from harness.phoneworld.phone import SecureMode

pytest_plugins = ("tests.adb_fixtures",)


def diff(frame, world) -> float:
    expected = np.asarray(world.screenshot().resize((frame.width, frame.height)), dtype=np.int16)
    return float(np.abs(np.asarray(frame.image, dtype=np.int16) - expected).mean())


def test_frames_decode_to_the_phone_screen(adb_server, sim_phone):
    mirror = Mirror(adb_server.client().device(sim_phone.address)).start()
    try:
        frame = mirror.latest()
        assert (frame.width, frame.height) == (1080, 2400)
        assert diff(frame, sim_phone.world) < 3.0
        assert abs(frame.timestamp - time.time()) < 10
        assert sim_phone.fs.exists("/data/local/tmp/scrcpy-server.jar")  # pushed over sync
    finally:
        mirror.stop()
    deadline = time.monotonic() + 5
    while sim_phone.scrcpy_servers and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sim_phone.scrcpy_servers  # the server exits when the client leaves


def test_a_tap_over_the_control_channel_changes_the_world(adb_server, sim_phone):
    mirror = Mirror(adb_server.client().device(sim_phone.address), max_size=800).start()
    try:
        x, y = sim_phone.world.find("Settings").center
        mirror.tap(x, y)
        deadline = time.monotonic() + 5
        while sim_phone.world.foreground[0] != "com.android.settings" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sim_phone.world.foreground[0] == "com.android.settings"
        deadline = time.monotonic() + 5  # frames already in flight show the old screen; the new one follows
        while diff(mirror.latest(), sim_phone.world) >= 4.0 and time.monotonic() < deadline:
            mirror.wait_frame(after=mirror.latest().monotonic, timeout=1)
        assert diff(mirror.latest(), sim_phone.world) < 4.0  # the stream shows the new screen
        mirror.key(4)  # BACK through the control channel
        deadline = time.monotonic() + 5
        while sim_phone.world.foreground[0] == "com.android.settings" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sim_phone.world.foreground[0] == "com.android.launcher3"
    finally:
        mirror.stop()


def test_the_mirror_reconnects_after_a_drop(adb_server, sim_phone):
    mirror = Mirror(adb_server.client().device(sim_phone.address), max_size=640).start()
    try:
        first = mirror.latest()
        sim_phone.drop_mirror()
        deadline = time.monotonic() + 10
        while mirror.reconnects < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mirror.reconnects == 1 and mirror.connected
        with sim_phone.lock:
            sim_phone.world.key(187)  # something changes on screen
        assert mirror.wait_frame(after=first.monotonic, timeout=5) is not None
    finally:
        mirror.stop()


def test_observations_use_the_freshest_frame(adb_server, sim_phone):
    client = adb_server.client()
    mirror = Mirror(client.device(sim_phone.address), max_size=800).start()
    try:
        device = AdbDevice(client, sim_phone.address, mirror=mirror)
        device.act(Action.open_app("Settings"))
        obs = device.observe()
        assert obs.source == "mirror" and obs.foreground == "com.android.settings"
        assert obs.screenshot.size == (360, 800)
        assert float(np.abs(np.asarray(obs.screenshot, dtype=np.int16) - np.asarray(
            sim_phone.world.screenshot().resize((360, 800)), dtype=np.int16)).mean()) < 4.0
        sim_phone.faults.secure = SecureMode.BLACK  # the stream goes black on a protected window
        obs = device.observe()
        assert obs.is_secure and obs.screenshot is None
    finally:
        mirror.stop()
