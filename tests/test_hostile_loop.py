"""A phone that hangs or fails mid-run (issue 20): a ScreenCaptureError (or any other device error) in
observe, foreground or the way back from a disallowed app used to escape run_episode as a traceback; now it
ends the run with a clear spoken ending, and the history says how the run ended with its steps intact."""

from __future__ import annotations

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import ErrorEvent, ErrorKind, Finished, Outcome, Said, SayPurpose
from assistant_core.history import HistoryStore
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer, DeviceError, ScreenCaptureError
from harness.phoneworld import SimDevice, World
from tests.core_fixtures import RecordingDevice, tool_call

SETTINGS = "com.android.settings"
OPEN_SETTINGS = tool_call("open_app", package=SETTINGS)
FINISH = tool_call("finish", text="all done")


class FailingDevice(RecordingDevice):
    fail_on: str = "observe"
    fail_at: int = 2
    error: Exception | None = None
    calls: int = 0

    def _tick(self, name):
        if name == self.fail_on:
            self.calls += 1
            if self.calls >= self.fail_at:
                raise self.error

    def observe(self):
        self._tick("observe")
        return super().observe()

    def foreground(self):
        self._tick("foreground")
        return super().foreground()

    def act(self, action):
        self._tick("act")
        return super().act(action)


@pytest.mark.parametrize("fail_on,fail_at,error", [
    ("observe", 2, ScreenCaptureError("The screenshot could not be taken.", detail="screencap hung")),
    ("observe", 1, ScreenCaptureError("The screenshot could not be taken.", detail="screencap hung")),
    ("foreground", 1, DeviceError("The phone did not answer.", detail="dumpsys timed out")),
    ("observe", 2, TimeoutError("adb read timed out")),
    ("observe", 2, OSError(104, "Connection reset by peer")),
])
def test_a_device_error_ends_the_run_clearly_with_history_consistent(tmp_path, fail_on, fail_at, error):
    world = World(seed=0, language="en")
    device = FailingDevice(SimDevice(world, screenshots=False))
    device.fail_on, device.fail_at, device.error = fail_on, fail_at, error
    history = HistoryStore(tmp_path / "h.db")
    policy = ScriptedPolicy.from_replies([OPEN_SETTINGS, OPEN_SETTINGS, FINISH])
    ctx = GateContext(allowed_apps=frozenset({SETTINGS}), app_labels=device.installed_apps())
    gen = run_episode("open settings", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
                      context=ctx, history=history, config=LoopConfig(), sleep=lambda s: None)
    events = []
    while True:
        try:
            events.append(next(gen))
        except StopIteration as done:
            result = done.value
            break
    assert result.outcome is Outcome.DEVICE_LOST
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and errors[-1].error is ErrorKind.DEVICE and not errors[-1].recoverable
    summary = [e for e in events if isinstance(e, Said) and e.purpose is SayPurpose.SUMMARY][-1]
    assert "phone" in summary.text.en and "手机" in summary.text.zh
    assert isinstance(events[-1], Finished)
    run = history.runs()[-1]
    assert run.outcome == "device_lost" and run.ended is not None
    assert run.steps == len(result.steps) == len(history.steps(run.id))
