"""Tool actions through the real adb server against the simulated phone: each tool's shell commands
change (or, for queries, only read) the phone as a real one would; a phone that refuses (a permission,
a missing service, a missing app) gives ToolRefused naming the GUI fallback; and a refused tool in a run
is taken over by the GUI path (the oracle here, the model in the product) and still checked."""

from __future__ import annotations

import copy

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import Outcome, VerificationStatus
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.safety import GateContext
from assistant_core.types import Action, ActionKind, ConfirmAnswer, Query, Setting
from harness.adb import AdbDevice
from harness.fastpath import FastPathPolicy, FastPlanner
from harness.phoneworld.oracle import OraclePolicy
from harness.phoneworld.tasks import make_world, registry
from harness.phoneworld.world import World
from harness.tools import ToolRefused
from harness.verify import KindRegistry, OutcomeVerifier

pytest_plugins = ("tests.adb_fixtures",)

DIALER, MESSAGING, CLOCK = "com.android.dialer", "com.android.messaging", "com.android.deskclock"


@pytest.fixture
def served(phone, adb_server):
    """A fresh world (seed 3, English) on the module's phone, with no refusals, and an AdbDevice on it."""

    def serve(world: World | None = None) -> tuple[World, AdbDevice]:
        world = world or World(seed=3, language="en")
        with phone.lock:
            phone.world = world
            phone.denied_permissions.clear()
            phone.missing_services.clear()
        return world, AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)

    yield serve
    with phone.lock:
        phone.denied_permissions.clear()
        phone.missing_services.clear()


def _contact(world: World, index: int = 1):
    return world.apps[DIALER].state.contacts[index]


def test_call_goes_through_the_call_intent(served):
    world, device = served()
    c = _contact(world)
    result = device.act(Action.call(c.phone, c.name.en))
    assert any(cmd.startswith("am start -W -a android.intent.action.CALL -d tel:") for cmd in result.commands)
    assert result.handler == DIALER
    digits = "".join(ch for ch in c.phone if ch.isdigit())
    assert "".join(ch for ch in world.apps[DIALER].state.in_call if ch.isdigit()) == digits
    assert world.foreground[0] == DIALER
    assert c.name.en in result.said.en and c.name.en in result.said.zh


def test_send_text_fills_the_composer_by_intent_and_presses_its_send_button(served):
    world, device = served()
    c = _contact(world, 2)
    result = device.act(Action.send_text(c.phone, "Running 10 minutes late, sorry", c.name.en))
    assert any("android.intent.action.SENDTO -d smsto:" in cmd and "sms_body" in cmd for cmd in result.commands)
    assert any(cmd.startswith("input tap ") for cmd in result.commands)
    assert world.apps[MESSAGING].sent_to(c.phone) == ["Running 10 minutes late, sorry"]


@pytest.mark.parametrize("clock, label", [("6:30", ""), ("21:05", "pills")])
def test_set_alarm_uses_the_alarm_clock_intent_with_its_extras(served, clock, label):
    world, device = served()
    result = device.act(Action.set_alarm(clock, label))
    cmd = next(c for c in result.commands if c.startswith("am start"))
    assert "android.intent.action.SET_ALARM" in cmd and "android.intent.extra.alarm.HOUR" in cmd
    alarm = world.apps[CLOCK].alarm_at(f"{int(clock.split(':')[0]):02d}:{clock.split(':')[1]}")
    assert alarm is not None and alarm.enabled and alarm.label == label


def test_set_timer_uses_the_timer_intent(served):
    world, device = served()
    result = device.act(Action.set_timer(7 * 60))
    assert any("android.intent.action.SET_TIMER" in c and "LENGTH 420" in c for c in result.commands)
    assert world.apps[CLOCK].timer_remaining() == 420


@pytest.mark.parametrize("setting, value, read", [
    (Setting.WIFI, "off", lambda s: not s.wifi), (Setting.WIFI, "on", lambda s: s.wifi),
    (Setting.BLUETOOTH, "on", lambda s: s.bluetooth), (Setting.AIRPLANE_MODE, "on", lambda s: s.airplane),
    (Setting.DO_NOT_DISTURB, "on", lambda s: s.dnd), (Setting.DARK_MODE, "on", lambda s: s.dark_mode),
    (Setting.LOCATION, "off", lambda s: not s.location), (Setting.BRIGHTNESS, "20", lambda s: s.brightness == 51),
])
def test_each_setting_switches_through_its_service(served, setting, value, read):
    world, device = served()
    state = world.apps["com.android.settings"].state
    if setting is Setting.WIFI:
        state.wifi = value == "off"  # start from the opposite
    result = device.act(Action.set_setting(setting, value))
    assert read(state), result.commands
    assert result.commands[0].startswith("cmd " if setting is not Setting.BRIGHTNESS else "settings put system")


def test_open_link_opens_the_app_that_resolves_the_intent(served):
    world, device = served()
    result = device.act(Action.open_link("https://example.com/news"))
    assert result.commands[0].startswith("cmd package resolve-activity --brief -a android.intent.action.VIEW")
    assert result.handler == "com.android.browser" and world.foreground[0] == "com.android.browser"


def _snapshot(world: World) -> object:
    return copy.deepcopy({p: a.state for p, a in world.apps.items()}), world.foreground


def test_queries_answer_from_the_phone_and_change_nothing(served):
    world, device = served()
    c = next(p for p in world.apps[DIALER].state.contacts
             if world.apps[MESSAGING].thread(p.phone) is not None)
    thread = world.apps[MESSAGING].thread(c.phone)
    before = _snapshot(world)
    answers = {q: device.act(Action.ask_phone(q, number=c.phone if q is Query.MESSAGES else "",
                                              contact=c.name.en if q is Query.MESSAGES else ""))
               for q in Query}
    assert _snapshot(world) == before, "a query changed the phone"
    assert f"{world.sys.battery}%" in answers[Query.BATTERY].said.en
    assert world.now.strftime("%H:%M") in answers[Query.TIME].said.en
    assert thread.messages[-1].text in answers[Query.MESSAGES].said.en
    assert len(world.notifications) == 0 or world.notifications[0].title in answers[Query.NOTIFICATIONS].said.en
    enabled = sorted(a.time for a in world.apps[CLOCK].state.alarms if a.enabled)
    assert not enabled or any(t in answers[Query.NEXT_ALARM].said.en for t in enabled)
    assert "Messages" in answers[Query.SCREEN].said.en  # the home screen's icons, by name
    for result in answers.values():
        assert all(cmd.startswith(("dumpsys ", "date ", "content query ", "rm -f /sdcard/window_dump.xml",
                                   "uiautomator dump ")) for cmd in result.commands), result.commands
        assert result.said.en and result.said.zh


def test_a_missing_permission_is_refused_with_the_gui_fallback(served, phone):
    world, device = served()
    phone.denied_permissions.add("com.android.alarm.permission.SET_ALARM")
    count = len(world.apps[CLOCK].state.alarms)
    with pytest.raises(ToolRefused) as refused:
        device.act(Action.set_alarm("07:00"))
    assert "Permission Denial" in refused.value.reason
    assert refused.value.fallback.en == "Set an alarm for 07:00" and "07:00" in refused.value.fallback.zh
    assert "permission" in refused.value.message.en and refused.value.message.zh
    assert len(world.apps[CLOCK].state.alarms) == count


def test_an_older_android_without_cmd_wifi_uses_svc(served, phone):
    world, device = served()
    phone.missing_services.add("wifi")
    world.apps["com.android.settings"].state.wifi = True
    result = device.act(Action.set_setting(Setting.WIFI, "off"))
    assert result.commands[0] == "cmd wifi set-wifi-enabled disabled" and "svc wifi disable" in result.commands
    assert not world.apps["com.android.settings"].state.wifi


def test_a_service_the_phone_lacks_is_refused(served, phone):
    world, device = served()
    phone.missing_services.add("connectivity")
    with pytest.raises(ToolRefused) as refused:
        device.act(Action.set_setting(Setting.AIRPLANE_MODE, "on"))
    assert "Can't find service" in refused.value.reason and not world.apps["com.android.settings"].state.airplane
    assert refused.value.fallback.en == "Turn on Airplane mode"


def test_a_missing_app_is_refused(served):
    world, device = served()
    del world.apps[CLOCK]
    with pytest.raises(ToolRefused) as refused:
        device.act(Action.set_timer(60))
    assert "unable to resolve" in refused.value.reason
    assert refused.value.message.en.startswith("The phone did not allow that directly (no app on the phone")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_tool_is_taken_over_by_the_gui_path_and_still_checked(served, phone, lang):
    task = registry.get("ClockSetAlarm")
    world, params = make_world("ClockSetAlarm", 2, lang)
    _, device = served(world)
    phone.denied_permissions.add("com.android.alarm.permission.SET_ALARM")
    goal = task.instruction(params).get(lang)
    policy = FastPathPolicy(FastPlanner(KindRegistry.load()), fallback=OraclePolicy("ClockSetAlarm", 2, world,
                            language=lang, params=params), device=device, lang=lang)
    context = GateContext(allowed_apps=frozenset(task.apps), app_labels=device.installed_apps(), lang=lang)
    result = yield_all(run_episode(goal, device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.YES),
                                   context=context, config=LoopConfig(step_budget=task.max_steps, lang=lang),
                                   sleep=lambda s: None, outcome_check=OutcomeVerifier(KindRegistry.load())))
    first = result.steps[0]
    assert first.action.kind is ActionKind.SET_ALARM and not first.executed and "permission" in first.error
    assert any(s.action.kind is ActionKind.CLICK for s in result.steps[1:]), "the GUI path did not take over"
    assert result.outcome is Outcome.FINISHED and task.is_successful(world, params)
    assert result.verification.status is VerificationStatus.VERIFIED


def yield_all(gen):
    while True:
        try:
            next(gen)
        except StopIteration as done:
            return done.value


def test_a_default_app_other_than_the_one_the_gate_judged_is_refused(served, phone, monkeypatch):
    """The allow-list is judged for the first known handler installed (com.android.browser here); a phone
    whose default for the link is another app (a second browser, installed too) is not started."""
    import harness.phoneworld.amstart as amstart

    world, device = served()
    world.apps["com.android.chrome"] = world.apps["com.android.browser"]  # a second browser is installed
    row = next(f for f in amstart.INTENT_FILTERS if f.package == "com.android.browser")
    chrome = amstart.IntentFilter(row.actions, "com.android.chrome", "com.google.android.apps.chrome.Main", row.open,
                                  schemes=row.schemes, categories=row.categories)
    monkeypatch.setattr(amstart, "INTENT_FILTERS", [chrome, *amstart.INTENT_FILTERS])  # ... and is the default
    with pytest.raises(ToolRefused) as refused:
        device.act(Action.open_link("https://example.com/"))
    assert "com.android.chrome" in refused.value.reason and "com.android.browser" in refused.value.reason
    assert not any(c.startswith("am start") for c in refused.value.commands)
    assert world.foreground[0] != "com.android.browser"
