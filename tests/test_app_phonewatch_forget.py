"""Forgetting a remembered Wi-Fi phone from the window (issue 29, item 8), as `phonebuddy devices forget`
does from the command line: the window says which remembered phones stay silent and how to forget them;
Ctrl+Shift+F, a number key, or a spoken or typed "forget the phone" drops it from the remembered list,
from the server's reconnect list and from the server's phone list, and the window says so in the user's
language. Through the real adb binary on a private port (tests/adb_owner_fixtures.py); the silent phones
are addresses where nothing listens."""

from __future__ import annotations

import socket

import pytest
from PySide6.QtCore import Qt

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, MainWindow
from app.phone import RememberedPhones
from app.phonewatch import FORGET, attach_phone_watch, forget_request
from harness.adbserver import AdbServerOwner
from harness.phonestates import STATES

pytest_plugins = ("tests.adb_owner_fixtures",)


def _dead_address() -> str:
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(("text", "expected"), [
    ("forget the phone", None), ("Forget the phone at 192.168.1.20.", "192.168.1.20:5555"),
    ("forget the second phone", 2), ("forget phone number 2", 2), ("忘掉手机", None), ("忘掉第二部手机", 2),
    ("把 192.168.1.21:37000 的手机忘掉", "192.168.1.21:37000"), ("请忘掉那部手机", None),
])
def test_forget_requests_are_understood(text, expected):
    assert forget_request(text) == ("forget", expected)


@pytest.mark.parametrize("text", ["don't forget to call Mum", "forget it", "忘记密码怎么办", "忘掉第二张照片",
                                  "open settings", "Remind me not to forget my phone charger"])
def test_other_requests_are_left_alone(text):
    assert forget_request(text) is None


def _window(qtbot, lang):
    window = MainWindow(lang=lang, services=AppServices(extra={"mirror": False}), phone=None,
                        agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    said: list[str] = []
    window.announcer.announced.connect(lambda text, _cue: said.append(text))
    return window, said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_silent_remembered_phone_is_said_and_forgotten_by_key(qtbot, user_env, lang):
    dead = _dead_address()
    remembered = RememberedPhones(user_env["HOME"] + "/phones.json")
    remembered.save(wifi=[dead])
    owner = AdbServerOwner(env=user_env, remembered=[dead])
    window, said = _window(qtbot, lang)
    watch = attach_phone_watch(window, owner, remembered=remembered)
    try:
        silent = FORGET["silent"].format(what=STATES["remembered_silent"].format(address=dead)).get(lang)
        qtbot.waitUntil(lambda: silent in said, timeout=40_000)
        assert ("Control Shift F" if lang == "en" else "Ctrl+Shift+F") in silent
        window.conversation.setFocus()
        qtbot.keyClick(window.conversation, Qt.Key.Key_F,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        forgot = STATES["forgot"].format(address=dead).get(lang)
        qtbot.waitUntil(lambda: forgot in said, timeout=20_000)
        assert remembered.load()["wifi"] == [] and owner.remembered == []
        assert dead not in [d.serial for d in owner.client().list()]
        said.clear()
        qtbot.keyClick(window.conversation, Qt.Key.Key_F,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        qtbot.waitUntil(lambda: FORGET["nothing"].get(lang) in said, timeout=10_000)
    finally:
        watch.stop()
        window.shutdown()


def test_several_silent_phones_are_read_out_and_forgotten_by_voice_and_number(qtbot, user_env):
    dead = [_dead_address(), _dead_address()]
    remembered = RememberedPhones(user_env["HOME"] + "/phones.json")
    remembered.save(wifi=dead)
    owner = AdbServerOwner(env=user_env, remembered=list(dead))
    window, said = _window(qtbot, "zh")
    watch = attach_phone_watch(window, owner, remembered=remembered)
    try:
        qtbot.waitUntil(lambda: any(STATES["remembered_silent"].format(address=dead[0]).zh in s for s in said),
                        timeout=40_000)
        window.submit_request("忘掉手机")  # what the spoken request becomes
        qtbot.waitUntil(lambda: any(s.startswith("有 2 部记住的手机没有响应") for s in said), timeout=10_000)
        assert f"2 号，地址为 {dead[1]} 的手机" in said[-1]
        window.submit_request("二号")  # the spoken number picks one
        qtbot.waitUntil(lambda: STATES["forgot"].format(address=dead[1]).zh in said, timeout=20_000)
        assert remembered.load()["wifi"] == [dead[0]]
        window.submit_request(f"Forget the phone at {dead[0]}")  # by address, typed
        qtbot.waitUntil(lambda: STATES["forgot"].format(address=dead[0]).zh in said, timeout=20_000)
        assert remembered.load()["wifi"] == [] and owner.remembered == []
        assert not window.is_running()  # none of these became a task for the phone
    finally:
        watch.stop()
        window.shutdown()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_f1_lists_the_forget_key_and_the_key_works_without_a_phone_watch(qtbot, lang):
    from app.shortcuts import help_lines
    from app.strings import tr

    window, said = _window(qtbot, lang)
    assert tr("sc_forget", lang) in help_lines(lang)  # F1 reads it, one line of its own
    assert tr("sc_forget", lang).startswith("Ctrl+Shift+F")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)  # a window shortcut needs an active window
    window.conversation.setFocus()
    qtbot.keyClick(window.conversation, Qt.Key.Key_F,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: FORGET["nothing"].get(lang) in said, timeout=3000)  # no watch: said, not silent
