"""The oracle as a scripted Policy inside the real agent loop and safety gate, and the oracle on a
Device without the world (as over ADB): it decides from the UI tree alone."""

from __future__ import annotations

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
from assistant_core.safety import GateContext, SafetyGate
from assistant_core.types import ActionKind, ConfirmAnswer, Policy
from harness.phoneworld import SimDevice
from harness.phoneworld.oracle import OraclePolicy, SimulatedUser, solve
from harness.phoneworld.tasks import TaskCategory, make_world, registry

SAFETY = [t.id for t in registry.TASKS if t.category is TaskCategory.SAFETY]


def run_gated(task_id: str, seed: int, lang: str, answer: ConfirmAnswer, *, simulated_user: bool = False):
    world, params = make_world(task_id, seed, lang)
    user = SimulatedUser(world) if simulated_user else ScriptedUser()
    task = registry.get(task_id)
    policy = OraclePolicy(task_id, seed, world, language=lang, params=params)
    assert isinstance(policy, Policy)
    apps = world.installed_apps()
    gen = run_episode(
        task.instruction(params).get(lang),
        device=SimDevice(world, screenshots=False),
        policy=policy,
        confirmer=FixedConfirmer(answer),
        context=GateContext(allowed_apps=frozenset(apps), app_labels=dict(apps), lang=lang),
        gate=SafetyGate(),
        user=user,
        config=LoopConfig(step_budget=task.max_steps, lang=lang, thumbnails=False),
        sleep=lambda s: None,
    )
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return world, params, stop.value, user


@pytest.mark.parametrize(
    "task_id, lang",
    [("SettingsTurnOnWifi", "zh"), ("MessagesSendText", "en"), ("MailMeetingToCalendar", "zh"),
     ("GalleryPhotoToChat", "en"), ("NotesShoppingListToShop", "en")],
)
def test_oracle_policy_solves_tasks_through_the_gated_loop(task_id, lang):
    world, params, result, _ = run_gated(task_id, 2, lang, ConfirmAnswer.YES)
    assert registry.get(task_id).is_successful(world, params), result.outcome


@pytest.mark.parametrize("task_id", ["ChatHotelBookingUnderBudget", "ChatFoodOrderItems", "ChatHospitalRegisterDoctor"])
def test_mini_program_payment_pin_is_left_to_the_user(task_id):
    """Through the loop the agent never types the PIN: the secure screen is handed over, the (simulated)
    user enters it, and the booking or order goes through."""
    world, params, result, user = run_gated(task_id, 1, "zh", ConfirmAnswer.YES, simulated_user=True)
    assert registry.get(task_id).is_successful(world, params), result.outcome
    assert user.taps == 6  # the user typed the six digits
    assert not any("支付密码" in s.thought for s in result.steps)  # the agent proposed none of them


def test_in_process_oracle_marks_the_pin_taps_as_the_users():
    traj = solve("ChatFoodCheapestDish", 0)
    assert traj.success
    user_steps = [s for s in traj.steps if s.by_user]
    assert len(user_steps) == 6 and all(s.action.kind is ActionKind.CLICK for s in user_steps)
    assert len(traj.agent_steps()) == len(traj.steps) - 6
    assert traj.to_dict()["by_user"] == [s.index for s in user_steps]


@pytest.mark.parametrize("task_id", SAFETY)
def test_gate_refusal_keeps_every_safety_task_safe(task_id):
    """The naive oracle tries the harmful step; the gate asks, the user says no, nothing happens."""
    world, params, result, _ = run_gated(task_id, 0, "en", ConfirmAnswer.NO)
    task = registry.get(task_id)
    assert task.is_successful(world, params), [e.kind for e in world.sensitive_events]
    assert result.confirmations + result.refusals > 0, "the gate never had to step in"


def test_oracle_policy_thoughts_follow_the_language_and_end_with_finish():
    world, params = make_world("SettingsTurnOnBluetooth", 0, "zh")
    policy = OraclePolicy("SettingsTurnOnBluetooth", 0, world, language="zh", params=params)
    device = SimDevice(world, screenshots=False)
    thoughts, kinds = [], []
    for _ in range(10):
        proposal = policy.propose("打开蓝牙", device.observe(), [])
        thoughts.append(proposal.thought)
        kinds.append(proposal.action.kind)
        device.act(proposal.action)
        if proposal.action.kind is ActionKind.FINISH:
            break
    assert kinds[0] is ActionKind.OPEN_APP and kinds[-1] is ActionKind.FINISH
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in thoughts)
    assert world.settings.bluetooth
    assert policy.propose("", device.observe(), []).action.kind is ActionKind.FINISH  # stays finished


def test_oracle_policy_gives_up_with_finish_when_the_screen_is_not_what_it_expects():
    world, params = make_world("ContactsDeleteContact", 0)
    policy = OraclePolicy("ContactsDeleteContact", 0, world, params=params)
    device = SimDevice(world, screenshots=False)
    device.act(policy.propose("", device.observe(), []).action)  # opens Phone
    world.phone.contacts.clear()  # the contact vanished under it
    world.refresh()
    for _ in range(4):  # it scrolls once looking for the contact, sees the list does not move, stops
        proposal = policy.propose("", device.observe(), [])
        if proposal.action.kind is ActionKind.FINISH:
            break
        device.act(proposal.action)
    assert proposal.action.kind is ActionKind.FINISH and "stop" in proposal.thought


@pytest.mark.parametrize(
    "task_id",
    ["ContactsNumberToMessage", "ChatHospitalRegisterDoctor", "BrowserPageToNote", "SettingsChangeLanguage"],
)
def test_oracle_drives_a_device_without_the_world(task_id):
    """As over ADB: no world handed to the oracle, so no verdict from it; the verifier still passes."""
    world, params = make_world(task_id, 3, "zh")
    traj = solve(task_id, 3, "zh", device=SimDevice(world, screenshots=False))
    assert traj.success is None
    task = registry.get(task_id)
    if task.id == "ChatHospitalRegisterDoctor":
        # The PIN is the user's: without the world the oracle asks for it instead of typing it.
        assert traj.steps[-2].action.kind is ActionKind.CALL_USER
        assert not task.is_successful(world, params)
    else:
        assert task.is_successful(world, params)


def test_oracle_run_with_screenshots_still_solves():
    traj = solve("ClockStartTimer", 1, screenshots=True)
    assert traj.success
    assert traj.steps[0].observation.screenshot is not None
    assert traj.steps[0].observation.screenshot.size == (1080, 2400)


def test_oracle_starts_an_app_left_on_an_inner_screen_from_its_first_screen():
    world, params = make_world("SettingsSetFontSize", 1)
    world.launch("com.android.settings")
    world.tap_text("Security")  # a previous run left Settings deep inside
    traj = solve("SettingsSetFontSize", 1, world=world, params=params)
    assert traj.success and traj.steps[0].action.kind is ActionKind.CLOSE_APP
