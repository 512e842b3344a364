"""Settings kinds that say what to turn on or off: a request for the opposite is never planned as the
kind ("turn off dark mode" is never dark_theme_on, or a run that wrongly turned dark mode on would be
"verified"), ring mode (silent / vibrate / normal) in both languages, turning an alarm or timer off is
never setting or starting one, and every settings kind that no PhoneWorld task exercises is checked
through the real adb server against the simulated phone: the run changes the setting with
`settings put` over adb, a run that did nothing or changed the wrong thing is not verified, and a
state already true before the run and still true is "already" (a checked success), not "done by this run"."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from assistant_core.events import VerificationStatus
from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.tasks.single_apps import spoken_time
from harness.phoneworld.world import World
from harness.verify import KindRegistry, OutcomeVerifier, read

pytest_plugins = ("tests.adb_fixtures",)

KINDS = KindRegistry.load()


def _kind(goal: str) -> str | None:
    match = KINDS.match(goal)
    return match.kind.name if match else None


# --- which kind a request is --------------------------------------------------------------------------------

DARK_ON = [
    "Switch the phone to the dark theme.", "把手机切换到深色主题。",  # SettingsTurnOnDarkTheme's instructions
    "Turn on dark mode", "turn on dark mode.", "Please turn on the dark theme", "Turn dark mode on", "Enable dark mode",
    "Switch to dark mode", "Change the theme to dark", "Turn on night mode", "Open Settings and turn on dark mode",
    "打开深色模式", "开启深色模式", "开启夜间模式", "切换到深色模式", "把深色模式打开", "把主题改成深色", "打开设置并开启深色模式",
]
DARK_OFF = [
    "Turn off dark mode", "Turn off dark mode.", "Turn off dark mode on my phone", "Turn dark mode off.",
    "Switch off the dark theme", "Disable dark mode", "Please turn off the dark theme", "Turn off night mode",
    "Switch to the light theme.", "Switch the phone to the light theme", "Change the theme to light",
    "Switch from dark to light theme", "Stop using dark mode", "Open Settings and turn off dark mode",
    "关闭深色模式", "关闭深色模式。", "关掉深色主题", "把深色模式关掉", "退出夜间模式", "切换到浅色主题", "把手机切换到浅色主题。",
    "把主题改回浅色", "从深色切换到浅色", "打开设置并关闭深色模式",
]


def test_the_dark_theme_task_and_requests_to_turn_it_on_are_dark_theme_on():
    task = registry.get("SettingsTurnOnDarkTheme")
    for lang in ("en", "zh"):
        assert task.instruction(task.params(task.rng_for(0))).get(lang) in DARK_ON
    for goal in DARK_ON:
        assert _kind(goal) == "dark_theme_on", goal


def test_a_request_to_turn_dark_mode_off_is_never_dark_theme_on():
    for goal in DARK_OFF:
        assert _kind(goal) == "dark_theme_off", goal
    # saying no to it, or turning it on and off in one breath: never checked as "turned on"
    for goal in ("Don't use dark mode", "I don't want dark mode", "不要深色模式", "别开深色模式",
                 "Turn on dark mode, then turn it off at 7", "打开深色模式设置，把它关掉", "开启深色模式，然后关掉"):
        assert _kind(goal) != "dark_theme_on", goal


def test_the_opposite_kind_has_the_opposite_value():
    on, off = KINDS.get("dark_theme_on").params, KINDS.get("dark_theme_off").params
    assert (on.namespace, on.key, on.value) == ("secure", "ui_night_mode", "2")
    assert (off.namespace, off.key, off.value) == ("secure", "ui_night_mode", "1")


TOGGLES = {
    "wifi": (["Wi-Fi", "the Wi-Fi", "wifi"], ["WLAN", " WLAN", "无线网络"]),
    "bluetooth": (["Bluetooth", "the Bluetooth"], ["蓝牙", " 蓝牙"]),
    "airplane": (["airplane mode", "flight mode"], ["飞行模式"]),
    "location": (["location", "the location"], ["位置信息", "定位"]),
    "dark_theme": (["dark mode", "the dark theme", "night mode"], ["深色模式", "深色主题", "夜间模式"]),
}
ON_EN = ["Turn on {x}", "Turn on {x}.", "turn {x} on", "Switch on {x}", "Enable {x}", "Please turn on {x}",
         "Can you turn on {x}?", "Open the Settings app and turn on {x}"]
OFF_EN = ["Turn off {x}", "Turn off {x}.", "turn {x} off", "Switch off {x}", "Disable {x}", "Please turn off {x}",
          "Can you turn off {x}?", "Open the Settings app and turn off {x}"]
ON_ZH = ["打开{x}", "打开{x}。", "开启{x}", "把{x}打开", "请打开{x}", "打开设置并打开{x}"]
OFF_ZH = ["关闭{x}", "关闭{x}。", "关掉{x}", "把{x}关掉", "请关闭{x}", "打开设置并关闭{x}"]


def test_every_on_off_setting_follows_the_verb_never_the_opposite():
    for name, (en_objects, zh_objects) in TOGGLES.items():
        for templates, objects, state in ((ON_EN, en_objects, "on"), (OFF_EN, en_objects, "off"),
                                          (ON_ZH, zh_objects, "on"), (OFF_ZH, zh_objects, "off")):
            for template in templates:
                for obj in objects:
                    goal = template.format(x=obj)
                    assert _kind(goal) == f"{name}_{state}", goal


def test_opening_a_settings_page_is_not_turning_the_setting_on():
    for goal in ("打开 WLAN 设置并关闭 WLAN", "打开 蓝牙 设置，关闭蓝牙", "打开 WLAN 设置", "打开深色模式设置"):
        assert _kind(goal) not in ("wifi_on", "bluetooth_on", "dark_theme_on"), goal
    assert _kind("打开定位设置，把定位关掉") == "location_off"
    assert _kind("Open the Wi-Fi settings and turn Wi-Fi off") == "wifi_off"


RING = {
    "ring_silent": ["Put the phone on silent.", "Put my phone on silent mode", "Set the phone to silent", "Mute the phone.",
                    "Mute my phone", "Silence the phone", "Turn on silent mode", "Please put the phone on silent",
                    "静音", "静音。", "把手机静音", "手机静音", "把手机调成静音。", "打开静音模式", "开启静音", "请把手机调成静音"],
    "ring_vibrate": ["Set the phone to vibrate.", "Put the phone on vibrate", "Switch the ringer to vibrate",
                     "Turn on vibrate mode", "Make the phone vibrate instead of ringing",
                     "调成振动", "调成振动。", "把手机调成震动", "打开振动模式", "把手机设为振动模式"],
    "ring_normal": ["Turn the ringer back on.", "Turn on the ringer", "Unmute the phone", "Take the phone off silent",
                    "Turn off silent mode", "Set the phone to ring.", "Switch the ringer back to normal",
                    "打开响铃", "开启响铃", "打开铃声", "关闭静音", "取消静音", "把静音关掉", "把手机取消静音", "把手机调回响铃",
                    "调成响铃模式"],
}


def test_ring_mode_requests_in_both_languages():
    for kind, goals in RING.items():
        for goal in goals:
            assert _kind(goal) == kind, goal
    values = {kind: KINDS.get(kind).params for kind in RING}
    assert {k: (p.namespace, p.key, p.value) for k, p in values.items()} == {
        "ring_silent": ("global", "mode_ringer", "0"), "ring_vibrate": ("global", "mode_ringer", "1"),
        "ring_normal": ("global", "mode_ringer", "2")}
    for kind in RING:
        describe = KINDS.get(kind).describe
        assert describe.en.isascii() and describe.zh and not describe.zh.isascii()


def test_ring_mode_requests_for_the_opposite_or_in_doubt_are_never_that_mode():
    for goal, never in [
        ("取消静音", "ring_silent"), ("关闭静音", "ring_silent"), ("不要静音", "ring_silent"), ("Unmute the phone", "ring_silent"),
        ("Turn off silent mode", "ring_silent"), ("Take the phone off silent", "ring_silent"),
        ("Don't mute the phone", "ring_silent"), ("Put the phone on silent, no vibration", "ring_vibrate"),
        ("关闭振动模式", "ring_vibrate"), ("Turn off vibrate mode", "ring_vibrate"), ("不要振动", "ring_vibrate"),
        ("关闭响铃", "ring_normal"), ("关掉铃声", "ring_normal"), ("Turn off the ringer", "ring_normal"),
        ("Set the phone to ring at 7 am", "ring_normal"), ("打开铃声设置", "ring_normal"),
        ("Mute the phone call", "ring_silent"),
    ]:
        assert _kind(goal) != never, goal


def test_turning_off_or_cancelling_an_alarm_or_timer_is_never_setting_or_starting_one():
    for goal in ("把7点的闹钟关掉", "取消明天早上7点的闹钟", "删除7点的闹钟", "关闭7点闹钟", "Cancel my 7 am alarm",
                 "Turn the 7 am alarm off", "Delete the alarm for 7:00", "Remove the alarm I set for 7 am"):
        match = KINDS.match(goal)
        assert match is not None and match.kind.name == "turn_off_alarm" and match.params.time == "07:00", goal
    for goal in ("Don't set an alarm for 7 am", "别定7点的闹钟"):
        assert _kind(goal) != "set_alarm", goal
    for goal in ("Cancel the 5 minute timer", "Stop the timer", "停止计时器", "取消5分钟的计时器", "关掉计时器"):
        assert _kind(goal) != "start_timer", goal
    # ... while asking for one still is
    assert _kind("定个闹钟") == "set_alarm" and _kind("帮我定个7点的闹钟") == "set_alarm"
    assert _kind("开个计时器") == "start_timer" and _kind("Start a 5 minute timer to remind me to turn off the stove") == "start_timer"


def test_unless_and_labels_in_a_caregiver_kind_file(tmp_path):
    (tmp_path / "kinds.json").write_text(json.dumps([
        {"kind": "torch_on", "check": "setting", "describe": ["torch on", "打开手电筒"], "priority": 40,
         "params": {"namespace": "global", "key": "torch", "value": "1", "what": "the torch|手电筒",
                    "labels": {"0": ["dark", "没亮"], "1": ["lit", "亮着"]}},
         "patterns": {"en": ["\\btorch\\b"], "zh": ["手电筒"]}, "unless": {"en": ["\\boff\\b"], "zh": ["关"]}},
    ]), encoding="utf-8")
    (tmp_path / "bad_labels.json").write_text(json.dumps(
        {"kind": "b", "check": "setting", "describe": ["a", "b"], "params": {"labels": {"0": "silent"}},
         "patterns": {"en": ["b"]}}), encoding="utf-8")
    (tmp_path / "bad_unless.json").write_text(json.dumps(
        {"kind": "c", "check": "setting", "describe": ["a", "b"], "patterns": {"en": ["c"]}, "unless": {"en": ["("]}}),
        encoding="utf-8")
    kinds = KindRegistry.load(extra=[tmp_path])
    assert kinds.match("Turn the torch on").kind.name == "torch_on"
    assert kinds.match("Turn the torch off") is None and kinds.match("把手电筒关了") is None
    assert kinds.get("torch_on").params.label("1").zh == "亮着"
    problems = "\n".join(kinds.problems)
    assert "bad_labels.json" in problems and "[English, Chinese]" in problems and "bad_unless.json" in problems
    verifier = OutcomeVerifier(kinds)
    plan = verifier.plan("Turn the torch on")
    from harness.verify.checks import Readings

    cmd = plan.commands[0]
    result = verifier.judge(plan, Readings(((cmd, "0\n"),)), Readings(((cmd, "1\n"),)))
    assert result.status is VerificationStatus.VERIFIED and "the torch is now lit" in result.summary.en
    assert "手电筒现在是亮着" in result.summary.zh


# --- through the real adb server --------------------------------------------------------------------------

@dataclass(frozen=True)
class SettingCase:
    kind: str
    en: str
    zh: str
    namespace: str
    key: str
    start: str  # the setting when the run starts (not yet what was asked)
    done: str  # what the request asks for, put over adb by the "run"
    wrong: tuple[str, str, str]  # what a run that got it wrong puts instead (namespace, key, value)


# The settings kinds no PhoneWorld task exercises (the others run in test_verify_adb.py).
SETTINGS_CASES = [
    SettingCase("wifi_off", "Turn off Wi-Fi.", "关闭 WLAN。", "global", "wifi_on", "1", "0", ("global", "bluetooth_on", "1")),
    SettingCase("airplane_off", "Turn off airplane mode.", "关闭飞行模式。", "global", "airplane_mode_on", "1", "0",
                ("global", "wifi_on", "1")),
    SettingCase("location_on", "Turn on location.", "打开位置信息。", "secure", "location_mode", "0", "3",
                ("global", "bluetooth_on", "1")),
    SettingCase("dark_theme_off", "Turn off dark mode.", "关闭深色模式。", "secure", "ui_night_mode", "2", "1",
                ("system", "screen_brightness", "60")),
    SettingCase("ring_silent", "Put the phone on silent.", "把手机调成静音。", "global", "mode_ringer", "2", "0",
                ("global", "mode_ringer", "1")),
    SettingCase("ring_vibrate", "Set the phone to vibrate.", "调成振动。", "global", "mode_ringer", "0", "1",
                ("global", "mode_ringer", "2")),
    SettingCase("ring_normal", "Turn the ringer back on.", "打开响铃。", "global", "mode_ringer", "0", "2",
                ("global", "mode_ringer", "1")),
    SettingCase("dnd_on", "Turn on do not disturb.", "打开勿扰模式。", "global", "zen_mode", "0", "1",
                ("global", "mode_ringer", "0")),
    SettingCase("dnd_off", "Turn off do not disturb.", "关闭勿扰模式。", "global", "zen_mode", "1", "0",
                ("global", "wifi_on", "0")),
]
# How the answer names a value ([English, Chinese]).
SPOKEN = {
    ("wifi_on", "0"): ("off", "关闭"), ("wifi_on", "1"): ("on", "开启"),
    ("airplane_mode_on", "0"): ("off", "关闭"), ("airplane_mode_on", "1"): ("on", "开启"),
    ("location_mode", "0"): ("off", "关闭"), ("location_mode", "3"): ("on", "开启"),
    ("ui_night_mode", "1"): ("light", "浅色"), ("ui_night_mode", "2"): ("dark", "深色"),
    ("mode_ringer", "0"): ("silent", "静音"), ("mode_ringer", "1"): ("vibrate", "振动"),
    ("zen_mode", "0"): ("off", "关闭"), ("zen_mode", "1"): ("on (important interruptions only)", "开启（仅限重要打扰）"),
    ("mode_ringer", "2"): ("normal (ringing)", "响铃"),
}
def test_every_settings_kind_is_exercised_through_adb_here_or_by_a_phoneworld_task():
    by_task = set()
    for task_id in registry.ids():
        task = registry.get(task_id)
        if task_id.startswith("Settings"):
            by_task.add(_kind(task.instruction(task.params(task.rng_for(0))).get("en")))
    here = {case.kind for case in SETTINGS_CASES}
    settings_kinds = {k.name for k in KINDS.kinds if k.check in ("setting", "wifi_network")}
    assert settings_kinds == (by_task - {None}) | here and not by_task & here


PHONE_SEED = 7


def _serve(phone, namespace: str, key: str, value: str) -> World:
    """A fresh phone whose setting is `value` when the run starts."""
    world = World(seed=7)
    world.settings_put(namespace, key, value)
    with phone.lock:
        phone.world = world
    return world


def _put(probe, namespace: str, key: str, value: str) -> None:
    """What a run does: `settings put` over adb (the simulated phone answers it like a phone)."""
    answer = probe.shell(f"settings put {namespace} {key} {value}")
    assert answer.strip() == "", answer
    assert probe.shell(f"settings get {namespace} {key}").strip() == value


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", SETTINGS_CASES, ids=[c.kind for c in SETTINGS_CASES])
def test_a_setting_put_over_adb_is_verified_and_nothing_wrong_or_already_is_not(phone, probe, case, lang):
    verifier = OutcomeVerifier(KINDS)
    plan = verifier.plan(case.en if lang == "en" else case.zh)
    assert plan.match is not None and plan.match.kind.name == case.kind and not plan.match.missing
    assert plan.commands == (f"settings get {case.namespace} {case.key}",)
    assert case.start != case.done

    def run(start: str, act: tuple[str, str, str] | None):
        _serve(phone, case.namespace, case.key, start)
        before = read(probe, plan.commands)
        if act is not None:
            _put(probe, *act)
        return verifier.judge(plan, before, read(probe, plan.commands))

    done = run(case.start, (case.namespace, case.key, case.done))
    en, zh = SPOKEN[(case.key, case.done)]
    assert done.status is VerificationStatus.VERIFIED, done.evidence
    assert done.summary.en.startswith("I checked") and f"is now {en}." in done.summary.en, done.summary.en
    assert f"现在是{zh}。" in done.summary.zh, done.summary.zh

    nothing = run(case.start, None)
    en, zh = SPOKEN[(case.key, case.start)]
    assert nothing.status is VerificationStatus.NOT_VERIFIED, nothing.evidence
    assert nothing.summary.en.startswith("I could not confirm") and f"is {en}." in nothing.summary.en
    assert f"是{zh}。" in nothing.summary.zh

    wrong = run(case.start, case.wrong)
    shown = case.wrong[2] if case.wrong[:2] == (case.namespace, case.key) else case.start
    en, zh = SPOKEN[(case.key, shown)]
    assert wrong.status is VerificationStatus.NOT_VERIFIED, wrong.evidence
    assert f"is {en}." in wrong.summary.en and f"是{zh}。" in wrong.summary.zh, wrong.summary

    # already so before the run, and still so: the goal state holds, told apart from "not done"
    already = run(case.done, (case.namespace, case.key, case.done))
    en, zh = SPOKEN[(case.key, case.done)]
    assert already.status is VerificationStatus.ALREADY, already.evidence
    assert f"was already {en}; I left it {en}" in already.summary.en, already.summary.en
    assert f"本来就是{zh}，我让它保持{zh}" in already.summary.zh, already.summary.zh
    # already so before, but the run changed it: not done
    undone = run(case.done, (case.namespace, case.key, case.start))
    assert undone.status is VerificationStatus.NOT_VERIFIED, undone.evidence


@pytest.mark.parametrize("goal", ["Turn off dark mode.", "关闭深色模式", "Switch to the light theme.", "切换到浅色主题"])
def test_a_run_that_turned_dark_mode_on_when_asked_to_turn_it_off_is_not_verified(phone, probe, goal):
    verifier = OutcomeVerifier(KINDS)
    _serve(phone, "secure", "ui_night_mode", "1")
    plan = verifier.plan(goal)
    before = read(probe, plan.commands)
    _put(probe, "secure", "ui_night_mode", "2")  # the agent did the opposite
    result = verifier.judge(plan, before, read(probe, plan.commands))
    assert result.status is VerificationStatus.NOT_VERIFIED, (plan.match, result.evidence)


def _alarm_goals(time: str) -> list[str]:
    w = spoken_time(time)
    return [f"把{w.zh}的闹钟关掉", f"取消{w.zh}的闹钟", f"删除{w.zh}的闹钟", f"Cancel my {w.en} alarm"]


def test_asked_to_cancel_an_alarm_a_run_that_set_one_is_not_verified_and_turning_it_off_is(phone, probe):
    verifier = OutcomeVerifier(KINDS)
    world, params = make_world("ClockSetAlarm", 2, "zh")
    for goal in [*_alarm_goals(params.time), f"Don't set an alarm for {spoken_time(params.time).en}."]:
        world, params = make_world("ClockSetAlarm", 2, "zh")
        with phone.lock:
            phone.world = world
        plan = verifier.plan(goal)
        before = read(probe, plan.commands)
        solve("ClockSetAlarm", 2, "zh", world=world, params=params)  # the agent set the alarm instead
        result = verifier.judge(plan, before, read(probe, plan.commands))
        assert result.status is not VerificationStatus.VERIFIED, (goal, plan.match, result.evidence)
    world, params = make_world("ClockTurnOffAlarm", 1, "zh")
    for goal in _alarm_goals(params.target):
        world, params = make_world("ClockTurnOffAlarm", 1, "zh")
        with phone.lock:
            phone.world = world
        plan = verifier.plan(goal)
        assert plan.match.kind.name == "turn_off_alarm", goal
        before = read(probe, plan.commands)
        solve("ClockTurnOffAlarm", 1, "zh", world=world, params=params)
        result = verifier.judge(plan, before, read(probe, plan.commands))
        assert result.status is VerificationStatus.VERIFIED, (goal, result.evidence)


def test_asked_to_cancel_a_timer_a_run_that_started_one_is_not_verified(phone, probe):
    verifier = OutcomeVerifier(KINDS)
    _, params = make_world("ClockStartTimer", 0, "en")
    for goal in (f"Cancel the {params.minutes} minute timer.", f"取消{params.minutes}分钟的计时器"):
        world, params = make_world("ClockStartTimer", 0, "en")
        with phone.lock:
            phone.world = world
        plan = verifier.plan(goal)
        before = read(probe, plan.commands) if plan.checkable else None
        solve("ClockStartTimer", 0, "en", world=world, params=params)
        result = verifier.judge(plan, before, read(probe, plan.commands)) if plan.checkable else verifier(goal=goal)
        assert result.status is not VerificationStatus.VERIFIED, (goal, plan.match, result.evidence)
