"""The loop on the real simulated phone (PhoneWorld-lite, in-process): step budget, loop guard, model
errors, output/call_user/finish, stop, device loss, confirmation with reminders, a target that changes
before a confirmed tap, leaving the allowed apps, secure screens, and history written before dispatch."""

from __future__ import annotations

import json
import threading

from assistant_core.confirm import FixedConfirmer, Patience, ScriptedConfirmer
from assistant_core.events import (
    Acted,
    ConfirmationAnswered,
    ConfirmationRequested,
    ErrorEvent,
    ErrorKind,
    Finished,
    Gated,
    Outcome,
    Paused,
    PauseReason,
    Resumed,
    Said,
    SayPurpose,
    Verification,
    VerificationStatus,
)
from assistant_core.history import HistoryStore
from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
from assistant_core.policies import ScriptedPolicy, action_to_reply
from assistant_core.safety import GateContext, Rule
from assistant_core.types import ActionKind, ConfirmAnswer, Observation, Verdict
from harness.phoneworld import SimDevice, World
from tests.core_fixtures import RecordingDevice, drain, tool_call

SETTINGS = "com.android.settings"
OPEN_SETTINGS = tool_call("open_app", package=SETTINGS)
FINISH = tool_call("finish", text="all done")
SECURITY_ROW = tool_call("click", points=[[500, 454]])
LOCATION_TOGGLE = tool_call("click", points=[[500, 204]])
DATE_LABEL = tool_call("click", points=[[500, 73]])  # the launcher's date: harmless, changes nothing


def make_device(lang: str = "en") -> tuple[World, RecordingDevice]:
    world = World(seed=0, language=lang)
    return world, RecordingDevice(SimDevice(world, screenshots=False))


def run(replies, *, device=None, world=None, confirmer=None, user=None, config=None, history=None, stop=None,
        allowed=frozenset({SETTINGS}), reconnect=None, outcome_check=None, on_event=None):
    if device is None:
        world, device = make_device()
    policy = ScriptedPolicy.from_replies(replies)
    ctx = GateContext(allowed_apps=allowed, app_labels=device.installed_apps())
    gen = run_episode("do the thing", device=device, policy=policy, confirmer=confirmer or FixedConfirmer(ConfirmAnswer.NO),
                      context=ctx, user=user, history=history, config=config or LoopConfig(), stop=stop,
                      sleep=lambda s: None, reconnect=reconnect, outcome_check=outcome_check)
    events = []
    while True:
        try:
            event = next(gen)
        except StopIteration as done:
            return events, done.value, device, policy, world
        events.append(event)
        if on_event is not None:
            on_event(event)


def of(events, cls):
    return [e for e in events if isinstance(e, cls)]


def test_a_simple_run_opens_settings_and_finishes_with_a_spoken_summary():
    events, result, device, _, world = run([OPEN_SETTINGS, FINISH])
    assert result.outcome is Outcome.FINISHED
    assert world.foreground[0] == SETTINGS
    assert [a.kind for a in device.dispatched] == [ActionKind.OPEN_APP]
    summary = [e for e in of(events, Said) if e.purpose is SayPurpose.SUMMARY]
    assert summary[-1].text.en == "Done. all done" and summary[-1].text.zh.startswith("完成了")
    assert isinstance(events[-1], Finished) and events[-1].result is result
    kinds = [str(e.kind) for e in events[:4]]
    assert kinds == ["observed", "proposed", "gated", "acted"]


def test_the_step_budget_ends_the_run():
    up = tool_call("scroll", points=[[500, 600], [500, 300]])
    down = tool_call("scroll", points=[[500, 300], [500, 600]])
    events, result, device, _, _ = run([up, down] * 10, config=LoopConfig(step_budget=4))
    assert result.outcome is Outcome.STEP_BUDGET
    assert len(device.dispatched) == 4
    assert "4 steps" in of(events, Said)[-1].text.en


def test_the_loop_guard_pauses_and_asks_then_stops_without_an_answer():
    user = ScriptedUser([])
    events, result, device, _, _ = run([DATE_LABEL] * 10, user=user, config=LoopConfig(loop_guard_repeats=3))
    assert result.outcome is Outcome.STUCK
    assert len(device.dispatched) == 2  # the third identical action is not dispatched
    (pause,) = [e for e in of(events, Paused) if e.reason is PauseReason.LOOP_GUARD]
    assert "3 times" in pause.message.en and "3 次" in pause.message.zh
    assert user.questions == [pause.message]


def test_the_loop_guard_resumes_with_the_users_advice():
    user = ScriptedUser(["open the settings instead"])
    events, result, device, policy, _ = run([DATE_LABEL] * 3 + [OPEN_SETTINGS, FINISH], user=user,
                                             config=LoopConfig(loop_guard_repeats=3))
    assert result.outcome is Outcome.FINISHED
    assert of(events, Resumed)[0].answer == "open the settings instead"
    # The advice reaches the policy as a typed exchange; the goal stays the request as said.
    assert set(policy.seen_goals) == {"do the thing"}
    (advice,) = policy.seen_exchanges[-1]
    assert advice.answer == "open the settings instead" and "3 times" in advice.question.en
    assert result.exchanges == (advice,) and result.goal == "do the thing"


def test_unparseable_replies_are_fed_back_with_bounded_retries():
    events, result, _, _, _ = run(["what?", "<tool_call>{bad json", OPEN_SETTINGS, FINISH])
    errors = of(events, ErrorEvent)
    assert [e.error for e in errors] == [ErrorKind.POLICY_OUTPUT] * 2 and all(e.recoverable for e in errors)
    assert result.outcome is Outcome.FINISHED
    assert result.steps[0].error.startswith("Your reply could not be used") and not result.steps[0].executed
    events, result, device, _, _ = run(["nope"] * 10, config=LoopConfig(max_policy_retries=3))
    assert result.outcome is Outcome.POLICY_FAILED and device.dispatched == []
    assert len(of(events, ErrorEvent)) == 4 and not of(events, ErrorEvent)[-1].recoverable


def test_output_is_said_and_call_user_pauses_and_resumes_with_the_answer():
    user = ScriptedUser(["Anna"])
    replies = [tool_call("output", text="I am looking"), tool_call("call_user", text="Who should I write to?"), FINISH]
    events, result, _, policy, _ = run(replies, user=user)
    said = [e for e in of(events, Said) if e.purpose is SayPurpose.OUTPUT]
    assert said[0].text.en == "I am looking"
    pause = [e for e in of(events, Paused) if e.reason is PauseReason.ASK_USER][0]
    assert pause.message.en == "Who should I write to?"
    assert of(events, Resumed)[0].answer == "Anna"
    # The answer reaches the policy as a typed exchange (question and answer) from the next step on; the
    # goal the policy gets is the request as said, unchanged after the answer.
    assert policy.seen_goals == ["do the thing"] * 3
    assert [len(e) for e in policy.seen_exchanges] == [0, 0, 1]
    (exchange,) = policy.seen_exchanges[-1]
    assert (exchange.question.en, exchange.answer, exchange.step) == ("Who should I write to?", "Anna", 1)
    assert result.exchanges == (exchange,) and result.goal == "do the thing"
    assert result.outcome is Outcome.FINISHED
    _, result, _, _, _ = run([tool_call("call_user", text="Which one?"), FINISH], user=ScriptedUser([]))
    assert result.outcome is Outcome.USER_ENDED


def test_an_answer_mid_run_reaches_the_models_prompt_in_its_own_part():
    """What the model is sent after the user answered: the goal as said, then the answer's line, then the
    history. The goal the loop hands the policy never changes."""
    from assistant_core.policy.prompt import build_prompt

    class Prompted(ScriptedPolicy):
        requests: list

        def propose(self, goal, observation, history):
            self.requests.append(build_prompt(goal, observation, history, self.profile).user[2])
            return super().propose(goal, observation, history)

    policy = Prompted.from_replies([tool_call("call_user", text="Who should I write to?"), FINISH])
    policy.requests = []
    world, device = make_device()
    gen = run_episode("Write to my friend", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
                      context=GateContext(allowed_apps=frozenset({SETTINGS}), app_labels=device.installed_apps()),
                      user=ScriptedUser(["Anna (from choir)\nnot Anna Li"]), sleep=lambda s: None)
    result = drain(gen)
    assert result.outcome is Outcome.FINISHED
    assert policy.seen_goals == ["Write to my friend"] * 2
    first, second = policy.requests
    assert first == "# Instruction\nWrite to my friend"
    assert second.startswith("# Instruction\nWrite to my friend\n(The user said: Anna (from choir)\nnot Anna Li)"
                             "\n\n# History of Previous Actions\n- Step 1:")


def test_stop_ends_the_run_at_once():
    stop = threading.Event()

    def on_event(event):
        if isinstance(event, Acted):
            stop.set()

    events, result, device, _, _ = run([OPEN_SETTINGS, SECURITY_ROW, FINISH], stop=stop, on_event=on_event)
    assert result.outcome is Outcome.STOPPED
    assert len(device.dispatched) == 1
    # "stop" as the answer to a question stops too.
    _, result, _, _, _ = run([tool_call("call_user", text="Which?"), FINISH], user=ScriptedUser(["停止"]))
    assert result.outcome is Outcome.STOPPED


def test_a_lost_device_pauses_and_resumes_when_it_returns():
    world, device = make_device()
    device.disconnect_after_acts, device.down_calls = 1, 3
    events, result, _, _, _ = run([OPEN_SETTINGS, FINISH], device=device, world=world)
    reasons = [e.reason for e in of(events, Paused)]
    assert PauseReason.DEVICE_LOST in reasons
    assert any(e.reason is PauseReason.DEVICE_LOST for e in of(events, Resumed))
    assert result.outcome is Outcome.FINISHED
    world, device = make_device()
    device.disconnect_after_acts, device.down_calls = 1, 10_000
    attempts = []
    events, result, _, _, _ = run([OPEN_SETTINGS, FINISH], device=device, world=world,
                                  config=LoopConfig(reconnect_attempts=4), reconnect=lambda n: attempts.append(n) or False)
    assert result.outcome is Outcome.DEVICE_LOST and attempts == [0, 1, 2, 3]


def test_confirmation_reminds_then_acts_on_yes():
    confirmer = ScriptedConfirmer([None, ConfirmAnswer.YES])
    events, result, device, _, world = run([OPEN_SETTINGS, SECURITY_ROW, LOCATION_TOGGLE, FINISH], confirmer=confirmer,
                                            config=LoopConfig(patience=Patience(window_s=30, reminders=2)))
    (request,) = of(events, ConfirmationRequested)
    assert "security setting" in request.question.en and "安全设置" in request.question.zh
    reminders = [e for e in of(events, Said) if e.purpose is SayPurpose.REMINDER]
    assert len(reminders) == 1 and "still waiting" in reminders[0].text.en
    assert of(events, ConfirmationAnswered)[0].answer is ConfirmAnswer.YES
    assert len(device.dispatched) == 3
    assert result.confirmations == 1


def test_no_means_no_and_the_same_action_is_then_refused_without_asking_again():
    confirmer = ScriptedConfirmer([ConfirmAnswer.NO])
    events, result, device, _, _ = run([OPEN_SETTINGS, SECURITY_ROW, LOCATION_TOGGLE, LOCATION_TOGGLE, FINISH],
                                       confirmer=confirmer)
    assert len(device.dispatched) == 2
    assert len(confirmer.seen) == 1
    rules = [e.decision.rule for e in of(events, Gated)]
    assert Rule.DENY_USER_DECLINED in rules
    declined = [s for s in result.steps if s.confirmation is ConfirmAnswer.NO][0]
    assert "said no" in declined.error


def test_silence_means_no():
    events, _, device, _, _ = run([OPEN_SETTINGS, SECURITY_ROW, LOCATION_TOGGLE, FINISH], confirmer=FixedConfirmer(None),
                                  config=LoopConfig(patience=Patience(window_s=5, reminders=2)))
    answered = of(events, ConfirmationAnswered)[0]
    assert answered.answer is ConfirmAnswer.NO and answered.by_default
    assert len(device.dispatched) == 2


def test_a_target_that_changes_before_a_confirmed_tap_is_dropped():
    world, device = make_device()
    confirmer = ScriptedConfirmer([ConfirmAnswer.YES])

    def pop_up(n):
        # The re-capture just before dispatch sees a dialog over the button.
        if confirmer.seen and not world.overlays:
            world.show_dialog(title="Special offer", message="Tap anywhere", buttons=[("Accept", None)])

    device.on_observe = pop_up
    events, result, _, _, _ = run([OPEN_SETTINGS, SECURITY_ROW, LOCATION_TOGGLE, FINISH], device=device, world=world,
                                  confirmer=confirmer)
    changed = [e for e in of(events, ErrorEvent) if e.error is ErrorKind.TARGET_CHANGED]
    assert len(changed) == 1
    assert len(device.dispatched) == 2  # the toggle was not tapped
    assert any("screen changed" in s.error for s in result.steps)


def test_leaving_the_allowed_apps_pauses_and_goes_back():
    world, device = make_device()

    def link_opens_other_app(action):
        if action.kind is ActionKind.CLICK:
            world.launch(SETTINGS)  # like a link that jumps into another app

    device.inner.act, original = (lambda a: (original(a), link_opens_other_app(a))), device.inner.act
    events, result, _, _, _ = run([DATE_LABEL, FINISH], device=device, world=world, allowed=frozenset())
    pause = [e for e in of(events, Paused) if e.reason is PauseReason.LEFT_ALLOWED_APPS]
    assert pause and "Settings" in pause[0].message.en
    assert world.foreground[0] != SETTINGS
    assert "left the allowed apps" in result.steps[0].error


def test_opening_a_disallowed_app_is_refused_and_said():
    events, result, device, _, world = run([OPEN_SETTINGS, FINISH], allowed=frozenset())
    assert device.dispatched == [] and world.foreground[0] != SETTINGS
    assert of(events, Gated)[0].decision.verdict is Verdict.DENY
    assert "caregiver" in [e for e in of(events, Said) if e.purpose is SayPurpose.NOTICE][0].text.en
    assert result.refusals == 1


class SecureOnce(RecordingDevice):
    def observe(self) -> Observation:
        obs = super().observe()
        if self.observes == 1:
            return Observation(obs.width, obs.height, obs.foreground, elements=(), is_secure=True)
        return obs


def test_a_secure_screen_hands_over_and_resumes():
    world = World(seed=0)
    device = SecureOnce(SimDevice(world, screenshots=False))
    user = ScriptedUser(["done"])
    events, result, _, _, _ = run([OPEN_SETTINGS, FINISH], device=device, world=world, user=user)
    (pause,) = [e for e in of(events, Paused) if e.reason is PauseReason.HANDOVER]
    assert "protected" in pause.message.en and "受保护" in pause.message.zh
    assert result.outcome is Outcome.FINISHED and world.foreground[0] == SETTINGS


def test_events_and_steps_are_in_the_history_before_the_action_is_dispatched(tmp_path):
    history = HistoryStore(tmp_path / "h.db")
    world, device = make_device()
    seen = []

    def check_before_dispatch(action):
        (run_row,) = history.runs()
        steps = history.steps(run_row.id)
        kinds = [k for _, k, _ in history.events(run_row.id)]
        seen.append((len(steps), steps[-1].executed, kinds[-1]))

    device.on_act = check_before_dispatch
    confirmer = ScriptedConfirmer([ConfirmAnswer.YES])
    _, result, _, _, _ = run([OPEN_SETTINGS, SECURITY_ROW, LOCATION_TOGGLE, FINISH], device=device, world=world,
                             history=history, confirmer=confirmer)
    assert seen[0] == (1, False, "gated")
    assert seen[2] == (3, False, "confirmation_answered")
    audit = [d for k, _, _, d in history.audit_rows("confirmation")]
    assert audit[0]["answer"] == "yes"
    steps = history.steps(result.run_id)
    assert [s.executed for s in steps] == [True, True, True, True]
    assert steps[2].confirmation == "yes" and steps[0].thumbnail is None  # no screenshots in this device
    assert (steps[0].width, steps[0].height) == (world.width, world.height)  # exports map taps with the real size
    assert history.get_run(result.run_id).outcome == "finished"


def test_the_outcome_check_hook_fills_the_verification():
    calls = []

    def check(*, goal, result, device):
        calls.append(result.outcome)
        return Verification(VerificationStatus.VERIFIED, f"foreground is {device.foreground()}")

    _, result, _, _, _ = run([OPEN_SETTINGS, FINISH], outcome_check=check)
    assert calls == [Outcome.FINISHED]
    assert result.verification.status is VerificationStatus.VERIFIED and SETTINGS in result.verification.evidence


def test_a_code_is_never_spoken_shown_or_stored(tmp_path):
    history = HistoryStore(tmp_path / "h.db")
    reply = tool_call("output", text="Your verification code is 552781")
    events, result, _, _, _ = run([reply, FINISH], history=history)
    assert not [e for e in of(events, Said) if "552781" in e.text.en]
    proposed = [e for e in events if str(e.kind) == "proposed"][0]
    assert "552781" not in proposed.action.text and "552781" not in proposed.raw_text
    assert of(events, Gated)[0].decision.rule == Rule.DENY_SECRET_SPEECH
    stored = history.steps(result.run_id)[0]
    assert "552781" not in json.dumps(stored.action) and "552781" not in stored.raw_text
    assert not history.search("552781") and not [p for _, _, p in history.events(result.run_id) if "552781" in json.dumps(p)]


def test_a_secret_typed_into_a_password_field_is_redacted_and_handed_over():
    from assistant_core.loop import _redact
    from assistant_core.safety import SafetyGate
    from assistant_core.types import Action, Proposal
    from tests.core_fixtures import el, screen

    field = el("", (40, 800, 1040, 950), rid="com.bank:id/password", focused=True, password=True)
    obs = screen(field)
    proposal = Proposal(Action.type_text("hunter22"), thought="type hunter22", raw_text='{"text": "hunter22"}')
    decision = SafetyGate().check(proposal.action, obs, GateContext(allowed_apps=frozenset({"com.example.app"})))
    action, raw, thought = _redact(proposal, decision)
    assert decision.rule == Rule.HANDOVER_SECRET_FIELD
    assert "hunter22" not in action.text + raw + thought


def test_the_run_is_searchable_and_the_loop_writes_no_conversation_rows(tmp_path):
    """The loop records steps and events; the conversation rows are the assistant's (tests/test_assistant.py)."""
    history = HistoryStore(tmp_path / "h.db")
    user = ScriptedUser(["安娜"])
    _, result, _, _, _ = run([tool_call("call_user", text="写给谁？"), FINISH], user=user, history=history)
    assert history.search("call_user")[0].run_id == result.run_id
    assert not list(history._open()["conversation"].rows)


def test_the_apps_own_are_you_sure_dialog_does_not_ask_the_user_twice_for_one_delete():
    from harness.phoneworld.oracle import OraclePolicy
    from harness.phoneworld.tasks import make_world, registry

    task = registry.get("GalleryDeletePhoto")
    world, params = make_world(task.id, 0, "en")
    device = RecordingDevice(SimDevice(world, screenshots=False))
    confirmer = ScriptedConfirmer([ConfirmAnswer.YES])
    gen = run_episode("delete the photo", device=device, policy=OraclePolicy(task.id, 0, world, params=params),
                      confirmer=confirmer, context=GateContext(allowed_apps=frozenset(task.apps),
                                                               app_labels=device.installed_apps()),
                      sleep=lambda s: None)
    events = list(gen)
    confirms = [e for e in of(events, Gated) if e.decision.verdict is Verdict.CONFIRM]
    answered = of(events, ConfirmationAnswered)
    assert len(confirms) == 2 and len(confirmer.seen) == 1
    assert [a.carried for a in answered] == [False, True]
    assert task.is_successful(world, params)


def test_one_yes_covers_the_later_steps_of_the_same_purchase_while_the_gate_judges_each():
    from phonebuddy.safety_eval import run_scenario
    from tests.core_fixtures import SHOP, WALLET, naive_shop_payment

    world = World(seed=0)
    script = [action_to_reply(a, 1080, 2400) for a in naive_shop_payment("en")]
    run_ = run_scenario(world, SimDevice(world, screenshots=False), ScriptedPolicy.from_replies(script), goal="buy",
                        allowed={SHOP, WALLET}, answer=ConfirmAnswer.YES, sensitive_kinds={"payment", "purchase"})
    # The gate rules CONFIRM on the Shop's Pay and the Wallet's Pay alike; the user is asked once, as the
    # Wallet's step is the same amount to the same payee (tests/test_loop_purchase.py: a different amount asks).
    assert run_.asked >= 2 and run_.questions == 1, run_


def test_codes_visible_on_screen_are_scrubbed_from_what_is_shown_and_stored():
    from assistant_core.loop import _redact
    from assistant_core.safety import SafetyGate
    from assistant_core.types import Action, Proposal
    from tests.core_fixtures import button, el, screen, tap

    sms = el("您的验证码是 731904，5 分钟内有效", (40, 600, 1040, 800))
    ok = button("Back to inbox", 1500)
    obs = screen(sms, ok)
    proposal = Proposal(tap(ok), thought="The SMS says 731904; going back.", raw_text="731904 <tool_call>...")
    decision = SafetyGate().check(proposal.action, obs, GateContext(allowed_apps=frozenset({"com.example.app"})))
    action, raw, thought = _redact(proposal, decision, obs)
    assert decision.verdict is Verdict.ALLOW and action == proposal.action
    assert "731904" not in raw + thought
    assert _redact(Proposal(Action.wait(1), thought="nothing secret 2024"), decision, obs)[2] == "nothing secret 2024"
