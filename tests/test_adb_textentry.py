"""Unicode typing through each text-entry path, over the real adb server, into a focused field."""

from __future__ import annotations

import pytest

from harness.adb import AdbDevice
from harness.mirror import Mirror
from harness.phoneworld.shell import LATIN_IME
from harness.phoneworld.world import World
from harness.textentry import TextEntry, TextEntryMethod, TextEntryUnavailable, input_text_commands

pytest_plugins = ("tests.adb_fixtures",)

CHINESE = "你好，世界！今天天气很好。😀"
ASCII = "It's 50% off & \"quoted\" $HOME `x` %s; done\\ok"


def focused_browser(phone) -> None:
    with phone.lock:
        phone.world.launch("com.android.browser")
        x, y = phone.world.find("Search or type web address").center
        phone.world.tap(x, y)
        assert phone.world.focus is not None


def field_text(phone) -> str:
    with phone.lock:
        return phone.world.focus.bind.get()


def test_ascii_through_input_text_with_escaping(adb_device, sim_phone):
    focused_browser(sim_phone)
    assert adb_device.text_entry.type(ASCII) is TextEntryMethod.INPUT_TEXT
    assert field_text(sim_phone) == ASCII
    assert sim_phone.ime.current == LATIN_IME


def test_chinese_through_the_adbkeyboard_broadcast(adb_device, sim_phone):
    focused_browser(sim_phone)
    adb_device.text_entry.type("abc ")
    assert adb_device.text_entry.type(CHINESE) is TextEntryMethod.ADB_KEYBOARD
    assert field_text(sim_phone) == "abc " + CHINESE
    assert sim_phone.ime.current == LATIN_IME  # remembered and restored
    adb_device.text_entry.type("新的", clear=True)
    assert field_text(sim_phone) == "新的"


def test_chinese_through_the_mirror_clipboard(adb_server, attach):
    with attach(World(seed=0), adb_keyboard=False) as phone:
        client = adb_server.client()
        mirror = Mirror(client.device(phone.address), max_size=800).start()
        try:
            device = AdbDevice(client, phone.address, mirror=mirror)
            focused_browser(phone)
            with phone.lock:
                phone.world.clipboard = "the user's own clipboard"
            assert device.text_entry.type(CHINESE) is TextEntryMethod.MIRROR_CLIPBOARD
            assert field_text(phone) == CHINESE
            with phone.lock:
                assert phone.world.clipboard == "the user's own clipboard"
        finally:
            mirror.stop()


def test_input_text_cannot_type_chinese_and_nothing_else_is_there(adb_server, attach):
    with attach(World(seed=0), adb_keyboard=False) as phone:
        device = AdbDevice(adb_server.client(), phone.address)
        focused_browser(phone)
        result = device.run("input text '你好'")
        assert result.exit_code != 0 and b"IllegalArgumentException" in result.stderr
        with pytest.raises(TextEntryUnavailable) as err:
            device.text_entry.type(CHINESE)
        assert "ADBKeyboard" in err.value.message.en and "ADBKeyboard" in err.value.message.zh
        with pytest.raises(TextEntryUnavailable):
            device.text_entry.type(CHINESE, method=TextEntryMethod.INPUT_TEXT)
        assert field_text(phone) == ""


def test_input_text_commands_escape_for_the_phone_shell():
    assert input_text_commands("a b") == ["input text a%sb"]
    assert input_text_commands("x%sy") == ["input text x", "input text '%'", "input text sy"]
    assert input_text_commands("one\ntwo") == ["input text one", "input keyevent 66", "input text two"]
    assert input_text_commands("it's") == ["input text 'it'\"'\"'s'"]


def test_textentry_restores_the_ime_even_when_typing_fails():
    calls: list[str] = []

    def shell(cmd: str) -> str:
        calls.append(cmd)
        if cmd.startswith("ime list"):
            return "com.android.inputmethod.latin/.LatinIME\ncom.android.adbkeyboard/.AdbIME\n"
        if cmd.startswith("settings get"):
            return "com.example/.MyIME\n"
        if cmd.startswith("ime set com.android.adbkeyboard"):
            return "Input method com.android.adbkeyboard/.AdbIME selected for user #0"
        if cmd.startswith("am broadcast -a ADB_INPUT_B64"):
            raise ConnectionError("cable pulled")
        return ""

    with pytest.raises(ConnectionError):
        TextEntry(shell).type("中文")
    assert calls[-1] == "ime set com.example/.MyIME"
