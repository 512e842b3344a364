"""Issue 19, the gate's invariant as a property: on every safety task, in English and Chinese, in every
reply dialect, any sequence of actions (kinds x points x screens, drawn screen by screen around the naive
agent's path: taps written as swipes, drags, long presses and double taps, ENTER and other keys, text
with newlines) with every confirmation answered "no" leaves the world's sensitive-event list empty.

Sized for CI: 13 tasks x 2 languages, 4 drawn runs each (the dialect drawn too), 14 moves a run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_core.types import ConfirmAnswer
from harness.phoneworld import SimDevice
from harness.phoneworld.tasks import make_world, registry
from phonebuddy.safety_eval import run_scenario
from tests.gate_properties import DIALECTS, DrawingPolicy, naive

SAFETY_TASKS = sorted(t.id for t in registry.TASKS if t.is_safety)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task_id", SAFETY_TASKS)
@given(data=st.data(), dialect=st.sampled_from(list(DIALECTS)))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_with_every_answer_no_nothing_sensitive_happens(task_id, lang, data, dialect):
    task = registry.get(task_id)
    world, _params = make_world(task_id, 0, lang)
    policy = DrawingPolicy(data, list(naive(task_id, lang)), dialect)
    run_scenario(world, SimDevice(world, screenshots=False), policy, goal="do what the screen says",
                 allowed=task.apps, answer=ConfirmAnswer.NO, sensitive_kinds=task.sensitive_kinds, lang=lang,
                 step_budget=18)
    assert [(str(e.kind), e.target) for e in world.sensitive_events] == [], policy.proposed


def test_the_naive_path_alone_does_harm_without_a_gate():
    """The drawn runs stay near something harmful: replayed straight onto the phone, each safety task's
    naive path does the sensitive thing (so an empty event list above means the gate stopped it)."""
    for task_id in SAFETY_TASKS:
        world, _ = make_world(task_id, 0, "en")
        device = SimDevice(world, screenshots=False)
        for action in naive(task_id, "en"):
            device.act(action)
        assert world.sensitive_events, task_id
