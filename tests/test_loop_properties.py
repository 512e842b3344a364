"""Property tests: no sequence of model replies makes the loop crash or dispatch an action the gate did
not clear (ALLOW, or CONFIRM answered yes), on the real simulated phone, in English and Chinese."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import ConfirmationAnswered, Event, Gated, Outcome, Paused, PauseReason, Resumed
from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.safety import GateContext, foreground_allowed
from assistant_core.types import ActionKind, Button, ConfirmAnswer, Verdict
from harness.phoneworld import SimDevice, World
from tests.core_fixtures import RecordingDevice, tool_call

coord = st.integers(-100, 1100)
point = st.lists(st.tuples(coord, coord).map(list), min_size=1, max_size=2)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
packages = st.sampled_from(["com.android.settings", "com.android.browser", "com.evil.app", "Settings", "设置", ""])

valid_calls = st.one_of(
    st.builds(lambda p: tool_call("click", points=p), point),
    st.builds(lambda p: tool_call("long_press", points=p, duration=800), point),
    st.builds(lambda t: tool_call("type", text=t), texts),
    st.builds(lambda a, b: tool_call("scroll", points=[a, b]), st.tuples(coord, coord).map(list), st.tuples(coord, coord).map(list)),
    st.builds(lambda b: tool_call("button_press", type=b), st.sampled_from([b.value for b in Button] + ["power", ""])),
    st.builds(lambda p: tool_call("open_app", package=p), packages),
    st.builds(lambda p: tool_call("close_app", package=p), packages),
    st.builds(lambda t: tool_call("wait", time=t), st.integers(-5, 100_000)),
    st.builds(lambda t: tool_call("output", text=t), texts),
    st.builds(lambda t: tool_call("call_user", text=t), texts),
    st.builds(lambda t: tool_call("finish", text=t), texts),
)
junk = st.one_of(
    texts,
    st.builds(lambda n, a: f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>",
              st.text(max_size=12), st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=6), max_size=3)),
    st.just("<tool_call>{\"name\": \"click\", \"arguments\": {\"points\": [[1, 2"),
    st.just("<think>unfinished"),
)
replies = st.lists(st.one_of(valid_calls, valid_calls, junk), min_size=0, max_size=14)


def run_checked(script, answer, lang, allowed):
    world = World(seed=0, language=lang)
    device = RecordingDevice(SimDevice(world, screenshots=False))
    ctx = GateContext(allowed_apps=allowed, app_labels=device.installed_apps(), lang=lang)
    events: list[Event] = []
    violations: list[str] = []

    def on_act(action):
        gated = [e for e in events if isinstance(e, Gated)]
        left = [i for i, e in enumerate(events) if isinstance(e, Paused) and e.reason is PauseReason.LEFT_ALLOWED_APPS]
        going_back = bool(left) and not any(isinstance(e, Resumed) and e.reason is PauseReason.LEFT_ALLOWED_APPS
                                            for e in events[left[-1]:])
        if going_back:
            # Between that pause and its resume the loop itself presses back, then home; nothing else.
            if not (action.kind is ActionKind.BUTTON_PRESS and action.button in (Button.BACK, Button.HOME)):
                violations.append(f"{action} dispatched while leaving a disallowed app")
            return
        if not gated:
            violations.append(f"{action} dispatched before any gate decision")
            return
        decision = gated[-1].decision
        if decision.verdict is Verdict.DENY:
            violations.append(f"{action} dispatched although denied ({decision.rule})")
        if decision.verdict is Verdict.CONFIRM:
            answers = [e for e in events[events.index(gated[-1]):] if isinstance(e, ConfirmationAnswered)]
            if not answers or answers[-1].answer is not ConfirmAnswer.YES:
                violations.append(f"{action} dispatched without a yes ({decision.rule})")

    device.on_act = on_act
    gen = run_episode("anything", device=device, policy=ScriptedPolicy.from_replies(script),
                      confirmer=FixedConfirmer(answer), context=ctx, user=ScriptedUser(["go on"] * 3),
                      config=LoopConfig(step_budget=12, loop_guard_repeats=4, lang=lang), sleep=lambda s: None)
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            result = done.value
            break
    return result, violations, device, ctx


@given(replies, st.sampled_from([ConfirmAnswer.YES, ConfirmAnswer.NO, None]), st.sampled_from(["en", "zh"]),
       st.sampled_from([frozenset(), frozenset({"com.android.settings"})]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_reply_sequence_crashes_the_loop_or_skips_the_gate(script, answer, lang, allowed):
    result, violations, device, ctx = run_checked(script, answer, lang, allowed)
    assert result.outcome in Outcome
    assert violations == []
    assert foreground_allowed(device.foreground(), ctx)
    assert len([s for s in result.steps if s.executed]) <= 12
