"""Every task kind checked through the real adb server against the simulated phone: a run that did the
thing is verified; one that stopped an action short, used the wrong parameters (recipient, time, body,
number...) or did nothing is not; a state already true before the run is not success. The world's own
task verifier is asked too, so a check that drifts from it fails here."""

from __future__ import annotations

import random

import pytest

from assistant_core.events import VerificationStatus
from assistant_core.types import ActionKind
from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.world import World
from harness.verify import KindRegistry, OutcomeVerifier, read

pytest_plugins = ("tests.adb_fixtures",)

# One task per kind (two for calls: by name and by number), alternating languages.
CASES = [
    ("MessagesSendText", "send_message"), ("PhoneCallContact", "call"), ("PhoneDialNumber", "call"),
    ("ContactsAddContact", "add_contact"), ("ContactsDeleteContact", "delete_contact"),
    ("CalendarAddEvent", "create_event"), ("CalendarDeleteEvent", "delete_event"), ("ClockSetAlarm", "set_alarm"),
    ("ClockTurnOffAlarm", "turn_off_alarm"), ("ClockStartTimer", "start_timer"), ("NotesCreateNote", "save_note"),
    ("NotesDeleteNote", "delete_note"), ("FilesDeleteFile", "delete_file"), ("GalleryDeletePhoto", "delete_photo"),
    ("SettingsTurnOnWifi", "wifi_on"), ("SettingsTurnOnBluetooth", "bluetooth_on"),
    ("SettingsTurnOffBluetooth", "bluetooth_off"), ("SettingsTurnOnAirplaneMode", "airplane_on"),
    ("SettingsTurnOnDarkTheme", "dark_theme_on"), ("SettingsTurnOffLocation", "location_off"),
    ("SettingsSetBrightness", "set_brightness"), ("SettingsSetFontSize", "set_font_size"),
    ("SettingsChangeLanguage", "set_language"), ("SettingsConnectWifiNetwork", "connect_wifi_network"),
    # details the request points at, read from the phone: a contact's number, an event's time, a text's time
    ("ContactsNumberToMessage", "send_message"), ("CalendarEventToMessage", "send_message"),
    ("MessagesTimeToAlarm", "set_alarm"), ("MessagesInviteToCalendar", "create_event"),
    ("MessagesTextToNote", "save_note"),
]
KINDS = KindRegistry.load()


def test_the_cases_cover_every_kind_that_has_a_check_and_a_task():
    # settings kinds no task does are put over adb in test_verify_settings_kinds.py; apps in the tests below
    without_task = {"wifi_off", "airplane_off", "location_on", "dark_theme_off", "ring_silent", "ring_vibrate", "ring_normal",
                    "open_app", "install_app", "dnd_on", "dnd_off"}
    checkable = {k.name for k in KINDS.kinds if k.check != "unavailable"} - without_task
    assert {kind for _, kind in CASES} == checkable


def _serve(phone, world) -> None:
    with phone.lock:
        phone.world = world


def _check(phone, probe, verifier, task_id, seed, lang, act):
    world, params = make_world(task_id, seed, lang)
    _serve(phone, world)
    goal = registry.get(task_id).instruction(params).get(lang)
    plan = verifier.plan(goal)
    assert plan.checkable, f"{goal!r} has no checkable kind: {verifier.explain(plan)}"
    before = read(probe, plan.commands)
    act(world, params)
    after = read(probe, plan.commands)
    return verifier.judge(plan, before, after), bool(registry.get(task_id).is_successful(world, params)), plan


@pytest.mark.parametrize(("index", "task_id", "kind"), [(i, t, k) for i, (t, k) in enumerate(CASES)])
def test_every_kind_through_the_adb_server(phone, probe, index, task_id, kind):
    verifier = OutcomeVerifier(KINDS)
    lang = "zh" if index % 2 else "en"
    seed = 1 + index % 3
    task = registry.get(task_id)

    def done(world, params):
        solve(task_id, seed, lang, world=world, params=params)

    def nothing(world, params):
        return None

    full_world, full_params = make_world(task_id, seed, lang)
    effective = [s for s in solve(task_id, seed, lang, world=full_world, params=full_params).steps
                 if s.action.kind is not ActionKind.FINISH]

    def short(world, params):
        solve(task_id, seed, lang, world=world, params=params, max_steps=len(effective) - 1)

    def wrong(world, params):
        solve(task_id, seed, lang, world=world, params=task.perturb(params, random.Random(index)))

    result, truth, plan = _check(phone, probe, verifier, task_id, seed, lang, done)
    assert plan.match.kind.name == kind
    assert truth and result.status is VerificationStatus.VERIFIED, result.evidence
    assert result.summary.en.startswith("I checked") and result.summary.zh.startswith("我在手机上核实过了")

    for name, act in (("nothing", nothing), ("short", short), ("wrong", wrong)):
        if name == "wrong" and task.perturb(full_params, random.Random(index)) is None:
            continue  # a parameter-less task has nothing to get wrong
        result, truth, _ = _check(phone, probe, verifier, task_id, seed, lang, act)
        assert not truth, f"{name}: the world's verifier passed, so this run is no test"
        assert result.status is VerificationStatus.NOT_VERIFIED, f"{name}: {result.evidence}"
        assert result.summary.en.startswith("I could not confirm") and result.summary.zh


@pytest.mark.parametrize(("index", "task_id", "kind"), [(i, t, k) for i, (t, k) in enumerate(CASES)])
def test_a_state_already_true_before_the_run_is_not_this_runs_doing(phone, probe, index, task_id, kind):
    """A text, a call, a contact or an event already there is not success; a setting (or Wi-Fi network)
    already as asked, and still so, is "already": the goal state holds, told apart from not done."""
    verifier = OutcomeVerifier(KINDS)
    lang = "en" if index % 2 else "zh"

    def already(world, params):
        return None

    world, params = make_world(task_id, 0, lang)
    solve(task_id, 0, lang, world=world, params=params)  # done before the "run" starts
    assert registry.get(task_id).is_successful(world, params)
    _serve(phone, world)
    plan = verifier.plan(registry.get(task_id).instruction(params).get(lang))
    before = read(probe, plan.commands)
    after = read(probe, plan.commands)
    result = verifier.judge(plan, before, after)
    state_kinds = {"setting", "wifi_network"}
    expected = VerificationStatus.ALREADY if plan.match.kind.check in state_kinds else VerificationStatus.NOT_VERIFIED
    assert result.status is expected, result.evidence


def test_kinds_the_phone_cannot_show_are_said_plainly():
    verifier = OutcomeVerifier(KINDS)
    for goal in ('Send Max Yuan a WeChat message: "hi"', "用微信给袁麦克斯发消息：“我六点到”",
                 "Email Amy Cao at amy.cao@example.com with the subject 'Lunch' and the text 'hi'."):
        result = verifier(goal=goal)
        assert result.status is VerificationStatus.CANNOT_VERIFY and "private" in result.summary.en
        assert "私有" in result.summary.zh
    unknown = verifier(goal="Sing me a song about the sea.")
    assert unknown.status is VerificationStatus.CANNOT_VERIFY
    assert unknown.summary.en == "I can't check this kind of task, so I can't confirm it was done."
    assert unknown.summary.zh == "这类任务我没法核实，所以不能确认是否完成。"
    missing = verifier(goal="Set an alarm for that time.")
    assert missing.status is VerificationStatus.CANNOT_VERIFY and "the time" in missing.summary.en


def test_a_pointed_at_detail_that_is_not_on_the_phone_is_cannot_verify(phone, probe):
    verifier = OutcomeVerifier(KINDS)
    _serve(phone, World(seed=5))
    for goal, said in (("Nobody Known texted me when the bus leaves tomorrow. Set an alarm for that time.", "can't find"),
                       ("Tell Alice Chen by text what time my 'Moon landing' is today.", "Moon landing")):
        plan = verifier.plan(goal)
        assert plan.checkable, goal
        now = read(probe, plan.commands)
        result = verifier.judge(plan, now, now)
        assert result.status is VerificationStatus.CANNOT_VERIFY and said in result.summary.en, result.evidence


def test_a_phone_that_answers_with_errors_gives_cannot_verify(phone, probe, monkeypatch):
    verifier = OutcomeVerifier(KINDS)
    world, params = make_world("MessagesSendText", 0, "en")
    _serve(phone, world)
    plan = verifier.plan(registry.get("MessagesSendText").instruction(params).get("en"))
    before = read(probe, plan.commands)
    solve("MessagesSendText", 0, "en", world=world, params=params)

    def denied(args, io):
        io.err("Error while accessing provider:sms\njava.lang.SecurityException: Permission Denial: reading "
               "com.android.providers.telephony.SmsProvider requires android.permission.READ_SMS\n")
        return 1

    monkeypatch.setitem(phone.shell.commands, "content", denied)
    result = verifier.judge(plan, before, read(probe, plan.commands))
    assert result.status is VerificationStatus.CANNOT_VERIFY and "Permission Denial" in result.evidence
    assert "could not be read" in result.summary.en and result.summary.zh


def test_notification_and_foreground_checks_through_adb(phone, probe):
    from harness.verify.checks import CHECKS, Params

    world = World(seed=4)
    _serve(phone, world)
    posted, app = CHECKS["notification_posted"], CHECKS["app_foreground"]
    wanted = Params(text="Your parcel is at the door")
    before = read(probe, posted.commands(wanted))
    with phone.lock:
        world.notify("com.android.messaging", "Courier", "Your parcel is at the door")
    assert posted.judge(wanted, before, read(probe, posted.commands(wanted))).status is VerificationStatus.VERIFIED
    again = read(probe, posted.commands(wanted))
    assert posted.judge(wanted, again, again).status is VerificationStatus.NOT_VERIFIED  # already there
    settings = Params(package="com.android.settings")
    home = read(probe, app.commands(settings))
    with phone.lock:
        world.launch("com.android.settings")
    now = read(probe, app.commands(settings))
    assert app.judge(settings, home, now).status is VerificationStatus.VERIFIED
    assert app.judge(Params(package="com.android.dialer"), home, now).status is VerificationStatus.NOT_VERIFIED


def test_open_and_install_an_app_named_as_people_say_it(phone, probe):
    verifier = OutcomeVerifier(KINDS)
    world = World(seed=6, language="zh")
    _serve(phone, world)
    plan = verifier.plan("打开相册")
    before = read(probe, plan.commands)
    with phone.lock:
        world.launch("com.android.gallery3d")
    after = read(probe, plan.commands)
    assert verifier.judge(plan, before, after).status is VerificationStatus.VERIFIED
    assert verifier.judge(plan, after, after).status is VerificationStatus.NOT_VERIFIED  # already open
    unknown = verifier.plan("Open Telescope Pro")
    result = verifier.judge(unknown, before, read(probe, unknown.commands))
    assert result.status is VerificationStatus.CANNOT_VERIFY and "Telescope Pro" in result.summary.en
    clock = verifier.plan("Install Clock")
    now = read(probe, clock.commands)
    result = verifier.judge(clock, now, now)
    assert result.status is VerificationStatus.NOT_VERIFIED and "already installed" in result.summary.en
