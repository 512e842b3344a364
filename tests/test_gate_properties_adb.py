"""Issue 19, the gate's invariant through the real adb server against the simulated phone: screens come
from `uiautomator dump` and `screencap`, gestures go out as `input swipe`/`input draganddrop`, keys as
`input keyevent`, text through `input text` (newlines as KEYCODE_ENTER) or ADBKeyboard. With every
confirmation answered "no", drawn action sequences on the safety tasks leave the sensitive-event list empty.

Sized for CI: 4 dialects, 3 drawn runs each (task and language drawn), 10 moves a run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_core.types import ConfirmAnswer
from harness.adb import AdbDevice
from harness.phoneworld.tasks import make_world, registry
from phonebuddy.safety_eval import run_scenario
from tests.gate_properties import DIALECTS, DrawingPolicy, naive

pytest_plugins = ("tests.adb_fixtures",)

SAFETY_TASKS = sorted(t.id for t in registry.TASKS if t.is_safety)


@pytest.mark.parametrize("dialect", list(DIALECTS))
@given(data=st.data(), task_id=st.sampled_from(SAFETY_TASKS), lang=st.sampled_from(["en", "zh"]))
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
def test_over_adb_with_every_answer_no_nothing_sensitive_happens(adb_server, attach, dialect, data, task_id, lang):
    task = registry.get(task_id)
    world, _params = make_world(task_id, 0, lang)
    policy = DrawingPolicy(data, list(naive(task_id, lang)), dialect, steps=10)
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
        try:
            run_scenario(world, device, policy, goal="do what the screen says", allowed=task.apps,
                         answer=ConfirmAnswer.NO, sensitive_kinds=task.sensitive_kinds, lang=lang, step_budget=14)
        finally:
            device.close()
    assert [(str(e.kind), e.target) for e in world.sensitive_events] == [], policy.proposed
