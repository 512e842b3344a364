"""The window and the phone's lifecycle (app.phonewatch over harness.devicewatch), through the real adb
binary on a private port (tests/adb_owner_fixtures.py): with no adb server at all, the window starts one,
says so, finds a Wi-Fi phone it remembers, says it is connected and opens it; pulled out and put back,
and the server killed, are said in the window's language; a phone that never allows debugging gets its
TalkBack instruction; the wizard's "Connect the phone" step starts the server too."""

from __future__ import annotations

import os
import signal

import pytest

from app.agent import AgentChoice, AgentKind
from app.main_window import AppServices, MainWindow
from app.phonewatch import attach_phone_watch
from harness.adbserver import AdbServerOwner
from harness.phonestates import STATES
from harness.phoneworld.phone import SimPhone
from harness.phoneworld.world import World

pytest_plugins = ("tests.adb_owner_fixtures",)


def _said(window) -> list[str]:
    said: list[str] = []
    window.announcer.announced.connect(lambda text, _cue: said.append(text))
    return said


def _window(qtbot, lang: str, *, shown: bool = False) -> tuple[MainWindow, list[str]]:
    """A window with no phone yet, and the list of what it says."""
    window = MainWindow(lang=lang, services=AppServices(extra={"mirror": False}), phone=None,
                        agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    if shown:
        window.show()
    return window, _said(window)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_window_starts_the_server_finds_the_phone_and_follows_it(qtbot, user_env, lang, server_pids):
    phone = SimPhone(World(seed=0)).start()
    window, said = _window(qtbot, lang)
    owner = AdbServerOwner(env=user_env, remembered=[phone.address])
    watch = attach_phone_watch(window, owner)
    try:
        qtbot.waitUntil(lambda: window.phone is not None, timeout=40_000)
        assert window.phone.extra["serial"] == phone.address and not window.phone.is_simulated
        assert said[0] == STATES["server_starting"].get(lang)
        connected = {"en": "A phone was connected: PhoneWorld Lite ending in", "zh": "有手机连上了：PhoneWorld Lite"}[lang]
        assert any(s.startswith(connected) for s in said), said

        phone.adbd.stop()  # pulled out
        qtbot.waitUntil(lambda: said[-1] == STATES["unplugged"].get(lang), timeout=10_000)
        phone.adbd.restart()  # back
        back = {"en": "is back.", "zh": "回来了。"}[lang]
        qtbot.waitUntil(lambda: said[-1].endswith(back), timeout=20_000)

        os.kill(server_pids(owner.address.port)[0], signal.SIGKILL)
        qtbot.waitUntil(lambda: STATES["server_lost"].get(lang) in said, timeout=10_000)
        qtbot.waitUntil(lambda: said[-1].endswith(back), timeout=40_000)  # restarted, phone reconnected
        assert STATES["server_back"].get(lang) in said
        assert said.count(STATES["server_starting"].get(lang)) == 1
        assert window.phone.device.foreground()  # the same connection works through the new server
    finally:
        watch.stop()
        window.shutdown()
        phone.stop()


def test_a_locked_phone_is_opened_and_the_user_asked_to_unlock_it(qtbot, user_env):
    phone = SimPhone(World(seed=0)).start()
    phone.lock_screen()
    window, said = _window(qtbot, "zh")
    watch = attach_phone_watch(window, AdbServerOwner(env=user_env, remembered=[phone.address]))
    try:
        qtbot.waitUntil(lambda: STATES["locked"].zh in said, timeout=40_000)
        assert window.phone is not None and "密码" in said[-1]
    finally:
        watch.stop()
        window.shutdown()
        phone.stop()


def test_a_port_held_by_another_program_is_said_by_the_window(qtbot, user_env, server_pids):
    import socket

    port = int(user_env["ANDROID_ADB_SERVER_PORT"])
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", port))
    squatter.listen(8)  # accepts, never answers as adb
    window, said = _window(qtbot, "en")
    watch = attach_phone_watch(window, AdbServerOwner(env=user_env))
    try:
        expected = STATES["server_port_taken"].format(port=port).en
        qtbot.waitUntil(lambda: expected in said, timeout=30_000)
        assert server_pids(port) == [] and said.count(expected) == 1  # said once, not at every retry
    finally:
        watch.stop()
        window.shutdown()
        squatter.close()


def test_a_phone_waiting_for_allow_is_explained_and_not_opened(qtbot, user_env):
    from harness.phoneworld.adbd import AuthMode

    phone = SimPhone(World(seed=0)).start()
    phone.adbd.faults.auth = AuthMode.REFUSE
    window, said = _window(qtbot, "zh")
    watch = attach_phone_watch(window, AdbServerOwner(env=user_env, remembered=[phone.address]))
    try:
        qtbot.waitUntil(lambda: STATES["unauthorized"].zh in said, timeout=40_000)
        assert window.phone is None
    finally:
        watch.stop()
        window.shutdown()
        phone.stop()


def test_the_wizard_connect_step_starts_the_server_and_names_the_phone(user_env, monkeypatch, server_pids):
    from app import setup_wizard

    for key in ("HOME", "ANDROID_USER_HOME", "ANDROID_ADB_SERVER_PORT", "PHONEBUDDY_ADB_START", "XDG_DATA_HOME"):
        monkeypatch.setenv(key, user_env[key])
    phone = SimPhone(World(seed=0)).start()
    try:
        with pytest.raises(setup_wizard.SetupStepError) as none_yet:
            setup_wizard._check_phone()  # server started, but no phone yet: what to do, step by step
        assert none_yet.value.text == STATES["no_phone"]
        assert len(server_pids(int(user_env["ANDROID_ADB_SERVER_PORT"]))) == 1
        from harness.adbserver import AdbServerOwner as Owner

        Owner().ensure().connect(phone.address)
        assert "PhoneWorld Lite" in setup_wizard._check_phone()
    finally:
        phone.stop()


def test_a_wifi_phone_connected_from_the_wizard_runs_a_typed_request(qtbot, user_env, monkeypatch):
    """The wizard's "Connect the phone" page with a Wi-Fi address typed: the adb server is started, the
    phone connected and named, remembered for the next start; the window (following the server) opens it,
    and a typed request runs on it end to end through the real RemotePolicy (a stand-in model server)."""
    from app import setup_wizard
    from app.phone import RememberedPhones
    from assistant_core.policies import action_to_reply
    from assistant_core.settings import CaregiverSettings
    from harness.phoneworld.oracle import solve
    from harness.phoneworld.tasks import make_world, registry
    from tests.policy_standin import policy_server

    for key in ("HOME", "ANDROID_USER_HOME", "ANDROID_ADB_SERVER_PORT", "PHONEBUDDY_ADB_START", "XDG_DATA_HOME"):
        monkeypatch.setenv(key, user_env[key])
    task_id = "SettingsTurnOnBluetooth"
    task = registry.get(task_id)
    world, params = make_world(task_id, 0, "en")
    phone = SimPhone(world).start()
    httpd, url, calls = policy_server([action_to_reply(a, 1080, 2400) for a in solve(task_id, 0, "en").actions()])
    window = MainWindow(lang="en", services=AppServices(extra={"mirror": False}), phone=None,
                        agent=AgentChoice(AgentKind.SERVER, server_address=url))
    qtbot.addWidget(window)
    window.apply_settings(CaregiverSettings(allowed_apps=frozenset(task.apps)), AgentChoice(AgentKind.SERVER,
                                                                                           server_address=url))
    said = _said(window)
    watch = attach_phone_watch(window, AdbServerOwner(socket_timeout=5.0))
    wizard = setup_wizard.SetupWizard(lang="en", announce=said.append)
    qtbot.addWidget(wizard)
    try:
        connect = next(p for p in wizard.pages if isinstance(p, setup_wizard.ConnectPage))
        assert connect.wifi.accessibleName() == "Wi-Fi address (optional)"
        assert connect.code.accessibleName() == "Pairing code (first time only)"
        connect.wifi.setText(phone.address)
        connect.run_action()
        qtbot.waitUntil(lambda: connect.result.text().startswith("Found: PhoneWorld Lite"), timeout=40_000)
        assert said[-1] == connect.result.text()  # shown and said
        assert RememberedPhones().load()["wifi"] == [phone.address]
        qtbot.waitUntil(lambda: window.phone is not None, timeout=20_000)
        finished: list = []
        window.run_finished.connect(finished.append)
        window.request_box.setText(task.instruction(params).en)
        window.submit_typed()
        qtbot.waitUntil(lambda: bool(finished), timeout=60_000)
        # Done on the phone and checked there (by the policy's steps, or the fast path for a quick setting).
        assert str(finished[0].outcome) == "finished" and task.is_successful(world, params), (said, calls)
    finally:
        watch.stop()
        window.shutdown()
        phone.stop()
        httpd.shutdown()


def test_several_phones_are_read_out_and_a_number_key_picks_one_remembered(qtbot, user_env):
    from PySide6.QtCore import Qt

    from app.phone import RememberedPhones

    phones = [SimPhone(World(seed=0)).start(), SimPhone(World(seed=1)).start()]
    remembered = RememberedPhones(user_env["HOME"] + "/phones.json")
    window, said = _window(qtbot, "en", shown=True)
    owner = AdbServerOwner(env=user_env)
    client = owner.ensure()
    for phone in phones:  # both ready before the window looks (one after the other would open the first)
        client.connect(phone.address)
        client.wait_for(phone.address, state="device", timeout=20)
    watch = attach_phone_watch(window, owner, remembered=remembered)
    try:
        qtbot.waitUntil(lambda: any(s.startswith("2 phones are connected: number 1, PhoneWorld Lite ending in")
                                    for s in said), timeout=40_000)
        assert window.phone is None and len(watch.pending_choice) == 2
        first, second = (d.serial for d in watch.pending_choice)
        assert f"number 2, PhoneWorld Lite ending in {second[-4:]}" in said[-1]
        window.submit_request("Number two.")  # what a spoken answer becomes
        qtbot.waitUntil(lambda: window.phone is not None, timeout=20_000)
        assert window.phone.extra["serial"] == second
        assert remembered.load()["chosen"] == second

        watch.stop()  # asked again (the choice forgotten): this time a number key answers
        window.set_phone(None)
        remembered.save(chosen="")
        said.clear()
        watch = attach_phone_watch(window, owner, remembered=remembered)
        qtbot.waitUntil(lambda: len(watch.pending_choice) == 2, timeout=20_000)
        window.conversation.setFocus()
        qtbot.keyClick(window.conversation, Qt.Key.Key_1)
        qtbot.waitUntil(lambda: window.phone is not None, timeout=20_000)
        assert window.phone.extra["serial"] == first and remembered.load()["chosen"] == first

        watch.stop()  # next start: the remembered choice is opened without asking
        window.set_phone(None)
        said.clear()
        watch = attach_phone_watch(window, owner, remembered=remembered)
        qtbot.waitUntil(lambda: window.phone is not None, timeout=20_000)
        assert window.phone.extra["serial"] == first
        assert not any("phones are connected" in s for s in said)
    finally:
        watch.stop()
        window.shutdown()
        for phone in phones:
            phone.stop()


def test_a_spoken_number_is_read_from_a_short_answer_only():
    from app.phonewatch import spoken_number

    for text, number in (("2", 2), ("two", 2), ("Number two.", 2), ("the second one", 2), ("phone 3", 3),
                         ("第二部", 2), ("二号", 2), ("2号手机", 2), ("选三", 3), ("两", 2)):
        assert spoken_number(text) == number, text
    for text in ("Turn on Wi-Fi", "call 2 people", "send 5 to Mum", "打开设置", ""):
        assert spoken_number(text) is None, text
