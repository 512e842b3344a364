"""PhoneWorld-lite engine: determinism, reset, gestures, keyboard, XML/elements agreement, system UI."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from assistant_core.types import Action, ActionOutOfBounds, Device
from harness.phoneworld import SimDevice, World
from harness.phoneworld.device import UnknownAppError
from harness.phoneworld.records import Permission, SensitiveKind
from harness.phoneworld.world import UnknownKeyError
from tests.world_fixtures import UI


def png(world: World) -> bytes:
    buf = io.BytesIO()
    world.screenshot().save(buf, format="PNG")
    return buf.getvalue()


def messy_run(ui: UI) -> None:
    ui.open("Settings")
    ui.tap("Wi-Fi")
    ui.tap("Use Wi-Fi")
    ui.press("home")
    ui.open("com.phoneworld.notes")
    ui.tap("New note")
    ui.fill("Title", "scratch")
    ui.press("back")
    ui.press("back")
    ui.world.clipboard = "copied"
    ui.world.lock()


def test_same_seed_gives_identical_png_bytes_and_other_seeds_differ():
    a, b, c = World(seed=3), World(seed=3), World(seed=4)
    for w in (a, b, c):
        w.launch("com.android.gallery3d")
        w.tap_text("Allow")
    assert png(a) == png(b)
    assert png(a) != png(c)  # seeded clock, battery and photos differ
    assert a.ui_xml() == b.ui_xml()


def test_reset_restores_the_start_state_exactly_after_a_messy_run():
    w = World(seed=7)
    start_png, start_xml = png(w), w.ui_xml()
    start_notes = [(n.title, n.body) for n in w.notes.notes]
    ui = UI(w)
    messy_run(ui)
    assert w.locked and w.clipboard == "copied"
    assert any(n.title == "scratch" for n in w.notes.notes)
    w.reset()
    assert not w.locked and w.clipboard == "" and w.sensitive_events == []
    assert [(n.title, n.body) for n in w.notes.notes] == start_notes
    assert w.ui_xml() == start_xml
    assert png(w) == start_png
    w.reset(seed=8)
    assert w.seed == 8 and png(w) != start_png


def test_tap_hits_the_node_under_the_point_and_switch_state_shows_in_xml():
    w = World(seed=1)
    ui = UI(w)
    ui.open("com.android.settings")
    before = w.settings.airplane
    ui.tap("Airplane mode")
    assert w.settings.airplane is (not before)
    node = next(e for e in ui.elements() if e.text == "Airplane mode")
    assert node.checkable and node.checked is w.settings.airplane
    assert w.settings_get("global", "airplane_mode_on") == ("1" if w.settings.airplane else "0")


def test_swipe_scrolls_a_list_by_the_swipe_distance():
    w = World(seed=2)
    ui = UI(w)
    ui.open("Shop")
    rows = [e for e in ui.elements() if e.resource_id == "com.phoneworld.shop:id/product"]
    ui.dev.act(Action.scroll(540, 1600, 540, 1540))  # 60 px up (past the 48 px touch slop: a scroll)
    moved = [e for e in ui.elements() if e.resource_id == "com.phoneworld.shop:id/product"]
    assert moved[3].bounds[1] == rows[3].bounds[1] - 60
    ui.dev.act(Action.scroll(540, 1900, 540, 400))  # far: clamped at the end of the list
    end = [e for e in ui.elements() if e.resource_id == "com.phoneworld.shop:id/product"]
    assert end[-1].bounds[3] <= 2400 - 132 - 132 and end[-1].bounds[3] - end[-1].bounds[1] == 150
    ui.dev.act(Action.scroll(540, 400, 540, 1900))  # and back to the top
    again = [e for e in ui.elements() if e.resource_id == "com.phoneworld.shop:id/product"]
    assert [e.bounds for e in again] == [e.bounds for e in rows]
    scrollable = [e for e in ui.elements() if e.scrollable]
    assert scrollable and scrollable[0].class_name == "androidx.recyclerview.widget.RecyclerView"


def test_keyboard_appears_on_focus_types_deletes_and_back_hides_it():
    w = World(seed=0)
    ui = UI(w)
    ui.open("Notes")
    ui.tap("New note")
    ui.tap("Title")
    assert any(e.package == "com.android.inputmethod.latin" for e in ui.elements())
    for key in ("h", "i"):
        ui.tap(key)
    assert w.notes.draft_title == "hi"
    ui.press("delete")
    assert w.notes.draft_title == "h"
    ui.type(" 你好")
    assert w.notes.draft_title == "h 你好"
    focused = ui.dev.observe().focused_element()
    assert (
        focused is not None and focused.text == "h 你好" and focused.class_name == "android.widget.EditText"
    )
    ui.press("back")  # hides the keyboard only
    assert not any(e.package == "com.android.inputmethod.latin" for e in ui.elements())
    assert w.foreground[0] == "com.phoneworld.notes" and w.route_of("com.phoneworld.notes").screen == "edit"
    ui.press("back")  # leaves the editor (the note is saved)
    assert w.notes.notes[0].title == "h 你好"


def test_long_press_field_offers_paste_and_copy_from_a_label():
    w = World(seed=0)
    ui = UI(w)
    ui.open("Mail")
    invite = w.apps["com.android.email"].invitation()
    ui.tap(invite.subject, contains=True)
    ui.long_press(invite.body)
    ui.tap("Copy")
    assert w.clipboard == invite.body
    ui.press("home")
    ui.open("Notes")
    ui.tap("New note")
    ui.tap("Note")
    ui.long_press("Note")
    ui.tap("Paste")
    assert w.notes.draft_body == invite.body


def test_home_back_and_recents():
    w = World(seed=0)
    ui = UI(w)
    ui.open("Clock")
    ui.press("home")
    assert w.foreground[0] == "com.android.launcher3"
    ui.tap("Clock")  # the launcher icon
    assert w.foreground[0] == "com.android.deskclock"
    ui.open("Calendar")
    ui.press("recents")
    labels = ui.texts()
    assert "Clock" in labels and "Calendar" in labels
    ui.tap("Clock")
    assert w.foreground[0] == "com.android.deskclock"
    ui.press("back")  # at the app's start screen: back goes home
    assert w.foreground[0] == "com.android.launcher3"
    assert "com.android.deskclock" in w.recents


def test_notification_shade_opens_with_swipe_down_and_opens_the_app():
    w = World(seed=0)
    w.notify("com.android.messaging", "Bob", "Hello there")
    ui = UI(w)
    ui.dev.act(Action.scroll(540, 40, 540, 1200))
    assert w.foreground == ("com.android.systemui", "com.android.systemui.NotificationShade")
    assert len(w.notifications) == 2  # the seeded meeting invitation and ours
    ui.tap("Hello there")
    assert w.foreground[0] == "com.android.messaging" and [n.text for n in w.notifications] != ["Hello there"]
    assert all(n.text != "Hello there" for n in w.notifications)
    ui.dev.act(Action.scroll(540, 40, 540, 1200))
    invite = w.notifications[0]
    ui.tap(invite.text)
    assert w.foreground[1] == "com.android.email.MailActivity" and w.email.mails[0].read is True
    assert not w.notifications


def test_permission_dialog_allow_records_a_sensitive_event_and_deny_does_not():
    w = World(seed=0)
    ui = UI(w)
    ui.open("Gallery")
    assert w.find("Allow") is not None
    assert any(e.package == "com.android.permissioncontroller" for e in ui.elements())
    ui.tap("Don't allow")
    assert (
        w.apps["com.android.gallery3d"].package,
        Permission.PHOTOS,
    ) not in w.granted and not w.sensitive_events
    ui.tap("Allow access")
    ui.tap("Allow")
    assert [e.kind for e in w.sensitive_events] == [SensitiveKind.PERMISSION_GRANTED]
    assert any(e.resource_id == "com.android.gallery3d:id/thumbnail" for e in ui.elements())


def test_lock_screen_swipe_up_unlocks_and_power_key_turns_the_screen_off():
    w = World(seed=0)
    dev = SimDevice(w)
    w.lock()
    obs = dev.observe()
    assert obs.is_locked and "Swipe up to unlock" in obs.screen_text
    dev.act(Action.click(540, 1200))
    assert w.locked  # taps do nothing on the lock screen
    dev.act(Action.scroll(540, 2000, 540, 800))
    assert not w.locked and dev.observe().foreground == "com.android.launcher3"
    w.key("POWER")
    assert not w.screen_on and w.screenshot().getbbox() is None  # black


def test_secure_payment_pin_screen_is_black_and_flagged():
    w = World(seed=5)
    ui = UI(w, screenshots=True)
    ui.open("Shop")
    ui.tap(w.shop.products[0].name.en)
    ui.tap("Buy now")
    ui.fill("Recipient name", "Ann")
    ui.fill("Delivery address", "1 Main St")
    ui.tap("Pay ¥", contains=True)
    assert w.foreground[0] == "com.phoneworld.wallet"
    assert w.screenshot().getbbox() is not None
    ui.tap("Pay ¥", contains=True)
    obs = ui.dev.observe()
    assert obs.is_secure and obs.screenshot.getbbox() is None
    assert not w.sensitive_events  # nothing paid yet


def test_crash_foreground_closes_the_app_and_shows_a_dialog():
    w = World(seed=0)
    ui = UI(w)
    ui.open("Browser")
    assert w.crash_foreground() == "com.android.browser"
    assert "com.android.browser" not in w.recents
    assert "Browser has stopped" in ui.texts()
    ui.tap("Close app")
    assert w.foreground[0] == "com.android.launcher3"


def test_chinese_language_renders_chinese_text_in_the_xml():
    w = World(seed=0, language="zh")
    ui = UI(w)
    assert "设置" in w.ui_xml() and "微信" in w.ui_xml()
    ui.open("设置")
    assert w.foreground[0] == "com.android.settings"
    assert "飞行模式" in w.ui_xml()
    assert w.settings_get("system", "system_locales") == "zh-CN"
    w.language = "en"
    assert "Airplane mode" in w.ui_xml()
    w.screenshot()  # draws CJK and Latin without error


def test_ui_xml_parses_and_its_bounds_match_the_elements():
    w = World(seed=0)
    w.launch("com.android.dialer")
    root = ET.fromstring(w.ui_xml().encode("utf-8"))
    nodes = list(root.iter("node"))[1:]  # skip the window frame
    elements = w.elements()
    assert len(nodes) == len(elements)
    for node, el in zip(nodes, elements, strict=True):
        bounds = tuple(int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))
        assert bounds == el.bounds
        assert node.get("text") == el.text and node.get("class") == el.class_name
        assert node.get("package") == el.package and (node.get("clickable") == "true") is el.clickable
    for attr in (
        "index",
        "resource-id",
        "content-desc",
        "checkable",
        "focused",
        "scrollable",
        "long-clickable",
    ):
        assert nodes[0].get(attr) is not None


def test_bad_input_gets_clear_errors():
    w = World(seed=0)
    dev = SimDevice(w)
    assert isinstance(dev, Device)
    with pytest.raises(ActionOutOfBounds) as err:
        dev.act(Action.click(5000, 10))
    assert "outside the screen" in err.value.message.en and "屏幕" in err.value.message.zh
    with pytest.raises(UnknownAppError, match="no app called"):
        dev.act(Action.open_app("com.example.nothing"))
    assert w.launch("com.example.nothing") is False
    with pytest.raises(UnknownKeyError, match="unknown key"):
        w.key("KEYCODE_TELEPORT")
    with pytest.raises(ValueError, match="outside"):
        w.tap(-1, 5)
    with pytest.raises(ValueError, match="namespace"):
        w.settings_get("bogus", "wifi_on")


def test_passive_actions_change_nothing_and_open_close_by_label():
    w = World(seed=0)
    dev = SimDevice(w)
    xml = w.ui_xml()
    for a in (Action.output("hi"), Action.call_user("help?"), Action.finish("done")):
        dev.act(a)
    assert w.ui_xml() == xml
    dev.act(Action.open_app("日历"))
    assert dev.foreground() == "com.android.calendar"
    dev.act(Action.close_app("Calendar"))
    assert dev.foreground() == "com.android.launcher3" and "com.android.calendar" not in w.recents
    assert dev.installed_apps()["com.phoneworld.chat"] == "WeChat"


def test_settings_put_and_get_agree_with_app_state():
    w = World(seed=0)
    w.settings_put("global", "wifi_on", "0")
    assert w.settings.wifi is False and w.settings_get("global", "wifi_on") == "0"
    w.settings_put("system", "screen_brightness", "200")
    assert w.settings.brightness == 200
    w.settings_put("secure", "ui_night_mode", "2")
    assert w.settings.dark_mode and w.settings_get("secure", "ui_night_mode") == "2"
    w.settings_put("system", "font_scale", "1.3")
    assert w.settings_get("system", "font_scale") == "1.3"
    w.settings_put("system", "system_locales", "zh-CN")
    assert w.language == "zh"
    w.settings_put("global", "custom_key", "x")
    assert w.settings_get("global", "custom_key") == "x" and w.settings_get("global", "missing") is None


def test_screenshots_are_identical_across_processes_with_different_hash_seeds():
    import hashlib
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, io; from harness.phoneworld import World; w = World(seed=9, language='zh');"
        "w.launch('com.phoneworld.chat'); b = io.BytesIO(); w.screenshot().save(b, format='PNG');"
        "print(hashlib.sha256(b.getvalue()).hexdigest())"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    w = World(seed=9, language="zh")
    w.launch("com.phoneworld.chat")
    assert out.stdout.strip() == hashlib.sha256(png(w)).hexdigest()


def test_missing_cjk_font_gets_a_clear_error(monkeypatch):
    from harness.phoneworld import render

    monkeypatch.setattr(render, "FONT_CANDIDATES", ("/nonexistent/font.ttc",))
    monkeypatch.delenv("PHONEWORLD_FONT", raising=False)
    with pytest.raises(render.FontMissingError, match="fonts-wqy-microhei"):
        render.find_cjk_font()
