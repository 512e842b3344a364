"""A phone that stops answering mid-run (issue 28, build 7).

The simulated adbd is told to freeze (`faults.frozen`): the adb server still lists the phone as "device",
but no service ever answers, as with a hung phone. Before, the call timed out after 20 s and was taken for
a disconnect, and the loop's reconnect polling asked the same silent phone again and again, each poll
waiting out its own timeout: the run kept waiting for minutes (past 200 s). Now a silent phone is
`DeviceUnresponsive`, and the run ends at the first unanswered call with a clear sentence, in both
languages, through the real adb server.
"""

from __future__ import annotations

import time

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import ErrorEvent, Outcome, Paused
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer, DeviceDisconnected
from harness.adb import AdbDevice, DeviceUnresponsive
from tests.core_fixtures import RecordingDevice, tool_call

pytest_plugins = ("tests.adb_fixtures",)


def test_a_call_to_a_silent_phone_is_unresponsive_not_a_disconnect(adb_server, sim_phone):
    device = AdbDevice(adb_server.client(), sim_phone.address, command_timeout_s=2.0)
    device.observe()
    sim_phone.adbd.faults.frozen = True
    try:
        with pytest.raises(DeviceUnresponsive) as err:
            device.shell("echo hello")
        assert not isinstance(err.value, DeviceDisconnected)  # the loop does not wait for it to come back
        assert "no answer for 2 seconds" in err.value.message.en and "2 秒内没有任何回应" in err.value.message.zh
        assert adb_server.wait_state(sim_phone.address) == "device"  # adb still lists it: a hung phone
    finally:
        sim_phone.adbd.faults.frozen = False


@pytest.mark.parametrize(("lang", "timeout_s"), [("en", None), ("zh", 3.0)])
def test_a_run_on_a_phone_that_stops_answering_ends_with_a_clear_message(adb_server, sim_phone, lang, timeout_s):
    # English with the default per-command timeout (20 s): the run must end within 30 s of the phone going
    # silent. Chinese with 3 s: the same path, the other language's sentence, without a second 20 s wait.
    extra = {} if timeout_s is None else {"command_timeout_s": timeout_s}
    device = RecordingDevice(AdbDevice(adb_server.client(), sim_phone.address, ui_tree=False, **extra))
    limit = (timeout_s or 20.0) + 10
    frozen_at: list[float] = []

    def freeze(action):
        if len(device.dispatched) == 1 and not frozen_at:
            sim_phone.adbd.faults.frozen = True
            frozen_at.append(time.monotonic())

    device.on_act = freeze
    up = tool_call("scroll", points=[[500, 600], [500, 300]])
    gen = run_episode("scroll around", device=device, policy=ScriptedPolicy.from_replies([up] * 6),
                      confirmer=FixedConfirmer(ConfirmAnswer.NO), context=GateContext(lang=lang),
                      config=LoopConfig(step_budget=6, lang=lang), sleep=time.sleep)
    events = []
    try:
        try:
            while True:
                events.append(next(gen))
        except StopIteration as done:
            result = done.value
        ended = time.monotonic()
    finally:
        sim_phone.adbd.faults.frozen = False
    assert frozen_at, "the phone was never frozen"
    assert result.outcome is Outcome.DEVICE_LOST
    assert not [e for e in events if isinstance(e, Paused)]  # no reconnect polling of a silent phone
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    print("errors:", [(str(e.kind), e.message.en) for e in errors])
    said = errors[-1].message.get(lang)  # the run's ending (an action cut off by the freeze may come first)
    if lang == "en":
        assert said.startswith("The phone stopped responding (it gave no answer for") and "restart it" in said
    else:
        assert said.startswith("手机没有响应（") and "秒内没有任何回应" in said and "重启手机" in said
    assert "Timeout" not in said and "Error" not in said
    elapsed = ended - frozen_at[0]
    print(f"the run ended {elapsed:.1f} s after the phone went silent")
    assert elapsed < limit + 10, f"the run took {elapsed:.1f} s after the phone went silent"  # timeout + slack
