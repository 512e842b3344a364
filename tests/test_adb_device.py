"""AdbDevice over the real adb server and the simulated phone: observation, every action kind (checked
against the in-process SimDevice on a twin world), apps, bounds, errors."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PIL import ImageChops

from assistant_core.types import Action, ActionKind, ActionOutOfBounds, Button, Device
from harness.adb import AdbDevice, AppNotFoundError, parse_ui_xml
from harness.phoneworld import SimDevice, World

pytest_plugins = ("tests.adb_fixtures",)


class FakeClock:
    def __init__(self):
        self.t = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


def test_observe_matches_the_world(adb_device, sim_phone):
    assert isinstance(adb_device, Device)
    obs = adb_device.observe()
    world = sim_phone.world
    assert (obs.width, obs.height) == (1080, 2400)
    assert obs.foreground == world.foreground[0] and obs.activity == world.foreground[1]
    assert obs.source == "screencap" and not obs.is_secure and not obs.is_locked
    assert ImageChops.difference(obs.screenshot, world.screenshot()).getbbox() is None
    # The device reads every window (`uiautomator dump --windows`); every element of the world is there,
    # in order, as in the world's own all-windows XML.
    assert obs.ui_xml.split("?>", 1)[1].startswith("<displays>")
    # (Each window's root is node 0 of its own hierarchy there, so root indexes are not compared.)
    assert [replace(e, index=0) for e in obs.elements if e.package != "android" or e.label] == [
        replace(e, index=0) for e in world.elements() if e.package != "android" or e.label
    ]
    assert {"state_tree_s", "capture_s", "observe_s"} <= set(adb_device.timings)


@pytest.mark.parametrize(("fmt", "header"), [(1, 16), (1, 12), (2, 16), (5, 16)])
def test_raw_capture_reads_each_pixel_format_and_header(adb_device, sim_phone, fmt, header):
    sim_phone.raw_format, sim_phone.raw_header = fmt, header
    obs = adb_device.observe()
    assert adb_device.capture == "raw" and obs.source == "screencap"
    assert ImageChops.difference(obs.screenshot, sim_phone.world.screenshot()).getbbox() is None


def test_a_raw_format_we_do_not_read_switches_to_png_for_good(adb_device, sim_phone):
    sim_phone.raw_format = 4  # RGB_565
    obs = adb_device.observe()
    assert adb_device.capture == "png" and adb_device.capture_retries == 0
    assert ImageChops.difference(obs.screenshot, sim_phone.world.screenshot()).getbbox() is None
    captures: list[str] = []
    exec_out = adb_device.exec_out
    adb_device.exec_out = lambda command, *args, **kwargs: captures.append(command) or exec_out(command, *args, **kwargs)
    adb_device.observe()
    assert captures == ["screencap -p"]  # no raw attempt any more


def test_decode_raw_screencap_refuses_what_is_not_a_whole_screen():
    import struct

    from harness.adb import RawFormatUnsupported, decode_raw_screencap

    pixels = bytes([10, 20, 30, 255]) * 6
    image = decode_raw_screencap(struct.pack("<IIII", 3, 2, 1, 0) + pixels)
    assert image.mode == "RGB" and image.size == (3, 2) and image.getpixel((2, 1)) == (10, 20, 30)
    assert decode_raw_screencap(struct.pack("<III", 3, 2, 5) + pixels).getpixel((0, 0)) == (30, 20, 10)  # BGRA
    # rows padded to a stride of 4 pixels: the padding is cut off, not read as picture
    padded = b"".join(bytes([10, 20, 30, 255]) * 3 + bytes([255, 0, 0, 255]) for _ in range(2))
    image = decode_raw_screencap(struct.pack("<IIII", 3, 2, 1, 0) + padded)
    assert image.size == (3, 2) and set(image.getdata()) == {(10, 20, 30)}
    for bad, message in ((struct.pack("<IIII", 3, 2, 1, 0) + pixels[:-5], "not 40"), (b"\x01\x02", "too short"),
                         (struct.pack("<IIII", 0, 2, 1, 0), "impossible size"),
                         (struct.pack("<IIII", 99_999, 2, 1, 0), "impossible size")):
        with pytest.raises(ValueError, match=message):
            decode_raw_screencap(bad)
    with pytest.raises(RawFormatUnsupported, match="pixel format 4"):
        decode_raw_screencap(struct.pack("<IIII", 3, 2, 4, 0) + pixels)


def _script() -> list[Action]:
    return [
        Action.open_app("Settings"),
        Action.scroll(540, 1800, 540, 900),
        Action.scroll(540, 900, 540, 1800),
        Action.click(540, 751),
        Action.press(Button.BACK),
        Action.long_press(540, 451, 900),
        Action.press(Button.BACK),
        Action.double_click(540, 301),
        Action.press(Button.HOME),
        Action.drag(135, 406, 400, 900),
        Action.open_app("浏览器"),
        Action.click(400, 162),
        Action.type_text("hello world"),
        Action.type_text("，你好，世界！😀"),
        Action.press(Button.DELETE),
        Action.press(Button.ENTER),
        Action.press(Button.RECENTS),
        Action.press(Button.RECENTS),
        Action.close_app("com.android.browser"),
        Action.press(Button.MENU),
        # tool actions: the same shell commands over adb and in-process (harness.tools)
        Action.set_setting("wifi", "off"), Action.set_setting("brightness", "30"), Action.set_alarm("06:10", "x"),
        Action.set_timer(120), Action.open_link("https://example.com/"), Action.ask_phone("battery"),
        Action.ask_phone("screen"), Action(ActionKind.RINGER_MODE), Action.send_text("198 4955 2291", "hi"),
        Action.call("198 4955 2291"),
        Action.press(Button.HOME),
        Action.output("done"),
        Action.call_user("are you there?"),
        Action.finish("ok"),
    ]


def test_every_action_kind_acts_like_the_in_process_device(adb_server, attach):
    twin = World(seed=3, language="en")
    sim = SimDevice(twin)
    with attach(World(seed=3, language="en")) as phone:
        device = AdbDevice(adb_server.client(), phone.address)
        kinds = set()
        for action in _script():
            sim.act(action)
            device.act(action)
            kinds.add(action.kind)
            assert phone.world.ui_xml() == twin.ui_xml(), f"worlds differ after {action}"
            assert phone.world.foreground == twin.foreground
            if action.kind is ActionKind.TYPE and "世界" in (action.text or ""):
                assert "hello world，你好，世界！😀" in phone.world.ui_xml()
        assert kinds == set(ActionKind) - {ActionKind.WAIT}
        assert phone.ime.current == "com.android.inputmethod.latin/.LatinIME"  # the typing IME was restored


def test_wait_sleeps_on_the_injected_clock(adb_server, sim_phone):
    clock = FakeClock()
    device = AdbDevice(adb_server.client(), sim_phone.address, clock=clock)
    before = sim_phone.world.steps
    device.act(Action.wait(1500))
    assert clock.sleeps == [1.5]
    assert sim_phone.world.steps == before


def test_installed_apps_and_open_by_name(adb_device, sim_phone):
    assert adb_device.installed_apps() == sim_phone.world.installed_apps()
    adb_device.act(Action.open_app("设置"))  # a Chinese name on an English phone
    assert sim_phone.world.foreground[0] == "com.android.settings"
    adb_device.act(Action.open_app("browser"))
    assert sim_phone.world.foreground[0] == "com.android.browser"
    with pytest.raises(AppNotFoundError) as err:
        adb_device.act(Action.open_app("支付宝"))
    assert "支付宝" in err.value.message.en and "支付宝" in err.value.message.zh
    adb_device.act(Action.open_app("微信"))
    assert sim_phone.world.foreground[0] == "com.phoneworld.chat"
    assert adb_device.foreground() == "com.phoneworld.chat"


def test_points_outside_the_screen_are_refused(adb_device, sim_phone):
    before = sim_phone.world.steps
    with pytest.raises(ActionOutOfBounds) as err:
        adb_device.act(Action.click(1080, 100))
    assert "1080" in err.value.message.zh
    with pytest.raises(ActionOutOfBounds):
        adb_device.act(Action.scroll(10, 10, 10, 2400))
    assert sim_phone.world.steps == before


def test_ui_xml_parsing_keeps_flags_and_bounds():
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        '<node index="2" text="Wi‑Fi &amp; more" resource-id="a:id/t" class="android.widget.Switch" package="p" '
        'content-desc="" checkable="true" checked="true" clickable="true" enabled="false" focusable="true" '
        'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
        'bounds="[10,20][30,40]" /></hierarchy>'
    )
    (e,) = parse_ui_xml(xml)
    assert e.bounds == (10, 20, 30, 40) and e.text == "Wi‑Fi & more" and e.index == 2
    assert e.checkable and e.checked and e.clickable and not e.enabled and e.focusable
