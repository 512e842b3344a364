"""Faults real phones show, acted out by the simulated phone, and how AdbDevice reports them."""

from __future__ import annotations

import time

import pytest

from assistant_core.types import Action, DeviceDisconnected, DeviceUnauthorized, ScreenCaptureError
from harness.adb import AdbDevice, ScreenLockedError, open_device
from harness.phoneworld.phone import SecureMode
from harness.phoneworld.world import World

pytest_plugins = ("tests.adb_fixtures",)


def test_killed_mid_run_is_a_clear_disconnect_and_nothing_else_breaks(adb_server, sim_phone, attach):
    device = AdbDevice(adb_server.client(), sim_phone.address, reconnect_grace_s=1.0)
    device.observe()
    sim_phone.stop()  # the phone dies: no listener, every connection cut
    start = time.monotonic()
    with pytest.raises(DeviceDisconnected) as err:
        device.act(Action.click(540, 1200))
    assert time.monotonic() - start < 5
    assert "disconnected" in err.value.message.en and "断开" in err.value.message.zh
    with pytest.raises(DeviceDisconnected):
        device.observe()
    # The adb server and other phones are fine.
    with attach(World(seed=1)) as other:
        assert AdbDevice(adb_server.client(), other.address).observe().foreground == "com.android.launcher3"


def test_offline_then_authorizing_then_back_without_a_restart(adb_server, sim_phone):
    device = AdbDevice(adb_server.client(), sim_phone.address, reconnect_grace_s=8.0)
    device.observe()
    sim_phone.adbd.go_offline(offline_s=1.0, authorizing_s=1.0)
    seen = []
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and "device" not in seen[1:]:
        state = device.state()
        if not seen or seen[-1] != state:
            seen.append(state)
        time.sleep(0.05)
    assert seen[:1] == ["device"] or seen[0] == "offline"
    assert "offline" in seen and "authorizing" in seen and seen[-1] == "device"
    assert seen.index("offline") < seen.index("authorizing")
    # The same AdbDevice, the same adb server: it just works again.
    assert device.observe().foreground == "com.android.launcher3"


def test_a_flap_during_a_call_is_waited_out(adb_server, sim_phone):
    device = AdbDevice(adb_server.client(), sim_phone.address, reconnect_grace_s=8.0)
    device.observe()
    sim_phone.adbd.go_offline(offline_s=0.8, authorizing_s=0.8)
    icon = sim_phone.world.find("Settings")
    device.act(Action.click(*icon.center))  # issued while the phone is offline
    assert sim_phone.world.foreground[0] == "com.android.settings"


def test_an_unauthorized_phone_gets_guidance(adb_server, attach):
    with attach(World(seed=0)) as phone:
        client = adb_server.client()
        phone.adbd.faults.auth = phone.adbd.faults.auth.REFUSE
        phone.adbd.drop_connections()
        assert adb_server.wait_state(phone.address, "unauthorized") == "unauthorized"
        assert phone.adbd.faults.accepted_keys, "the host offered its public key"
        with pytest.raises(DeviceUnauthorized) as err:
            open_device(client, phone.address)
        assert "USB debugging" in err.value.message.en and "Allow" in err.value.message.en
        assert "USB 调试" in err.value.message.zh and "允许" in err.value.message.zh
        with pytest.raises(DeviceUnauthorized):
            AdbDevice(client, phone.address, reconnect_grace_s=1.0).observe()


@pytest.mark.parametrize("mode", [SecureMode.BLACK, SecureMode.FAIL])
def test_a_protected_screen_is_reported_never_passed_on_as_black(adb_device, sim_phone, mode):
    sim_phone.faults.secure = mode
    obs = adb_device.observe()
    assert obs.is_secure
    assert obs.screenshot is None
    assert obs.elements  # the accessibility tree stays readable
    sim_phone.faults.secure = SecureMode.OFF
    obs = adb_device.observe()
    assert not obs.is_secure and obs.screenshot is not None


def test_a_hung_screenshot_is_retried_once(adb_device, sim_phone):
    sim_phone.faults.hang_next = 1
    start = time.monotonic()
    obs = adb_device.observe()
    assert obs.screenshot is not None and adb_device.capture_retries == 1
    assert time.monotonic() - start < 5


def test_a_screenshot_that_keeps_hanging_is_reported_within_5_s(adb_device, sim_phone):
    sim_phone.faults.hang_next = 2
    start = time.monotonic()
    with pytest.raises(ScreenCaptureError) as err:
        adb_device.observe()
    assert time.monotonic() - start < 5.5
    assert adb_device.capture_retries == 1
    assert "hung" in err.value.detail


def test_a_truncated_screenshot_is_retried_then_reported(adb_device, sim_phone):
    sim_phone.faults.truncate_next = 1
    assert adb_device.observe().screenshot.size == (1080, 2400)
    sim_phone.faults.truncate_next = 2
    with pytest.raises(ScreenCaptureError) as err:
        adb_device.observe()
    assert "truncated" in err.value.detail or "PNG" in err.value.detail


def test_a_locked_screen_is_detected_before_the_first_action(adb_device, sim_phone):
    sim_phone.lock_screen()
    obs = adb_device.observe()
    assert obs.is_locked
    steps = sim_phone.world.steps
    with pytest.raises(ScreenLockedError) as err:
        adb_device.act(Action.click(540, 1200))
    assert "unlock" in err.value.message.en and "解锁" in err.value.message.zh
    assert sim_phone.world.steps == steps  # nothing reached the phone


def test_a_locked_screen_is_found_even_without_an_observation(adb_server, sim_phone):
    sim_phone.lock_screen()
    device = AdbDevice(adb_server.client(), sim_phone.address)
    with pytest.raises(ScreenLockedError):
        device.act(Action.press("home"))


def test_a_crashed_foreground_app_shows_its_dialog(adb_device, sim_phone):
    adb_device.act(Action.open_app("Settings"))
    assert sim_phone.crash_foreground() == "com.android.settings"
    obs = adb_device.observe()
    assert obs.foreground != "com.android.settings"
    assert any("stopped" in e.label for e in obs.elements)


def test_a_dropped_connection_comes_back_by_itself(adb_server, sim_phone):
    device = AdbDevice(adb_server.client(), sim_phone.address, reconnect_grace_s=8.0)
    device.observe()
    sim_phone.adbd.drop_connections()  # Wi-Fi blinked: adb reconnects on its own
    assert device.observe().foreground == "com.android.launcher3"
    assert adb_server.wait_state(sim_phone.address) == "device"


def test_no_phone_and_listing(adb_server):
    from assistant_core.types import NoDeviceError
    from harness.adb import list_devices

    client = adb_server.client()
    assert "127.0.0.1:9" not in [d.serial for d in list_devices(client)]
    with pytest.raises(NoDeviceError) as err:
        open_device(client, "127.0.0.1:9", wait_s=0.3)
    assert "No phone is connected" in err.value.message.en and "没有连接手机" in err.value.message.zh


def test_listing_tells_usb_from_wifi():
    from adbutils import AdbDeviceInfo

    from harness.adb import list_devices

    class Client:
        def list(self, extended=False):
            return [
                AdbDeviceInfo("R58M123ABC", "device", {"model": "SM_G973F", "product": "beyond1"}),
                AdbDeviceInfo("192.168.1.20:5555", "offline", {}),
                AdbDeviceInfo("adb-R58M123ABC-xyz._adb-tls-connect._tcp", "unauthorized", {}),
            ]

    devices = list_devices(Client())
    assert [(d.transport, d.state) for d in devices] == [("usb", "device"), ("tcp", "offline"), ("tcp", "unauthorized")]
    assert devices[0].model == "SM_G973F"
