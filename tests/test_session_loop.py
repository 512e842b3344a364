"""The Session drives a run from another thread, as the desktop app does: the loop runs in a worker
thread with the Session as its Confirmer and UserChannel; the "UI" thread answers by voice commands."""

from __future__ import annotations

import queue
import threading

from assistant_core.confirm import Patience
from assistant_core.events import ConfirmationRequested, Event, Finished, Outcome, Paused
from assistant_core.loop import LoopConfig, gate_context_from, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.session import Session
from assistant_core.settings import CaregiverSettings
from harness.phoneworld import SimDevice, World
from tests.core_fixtures import RecordingDevice, tool_call

SETTINGS = "com.android.settings"
REPLIES = [tool_call("open_app", package=SETTINGS), tool_call("click", points=[[500, 454]]),
           tool_call("click", points=[[500, 204]]), tool_call("call_user", text="Anything else?"),
           tool_call("click", points=[[500, 204]]), tool_call("finish", text="done")]


def start(session: Session, replies):
    world = World(seed=0, language="zh")
    device = RecordingDevice(SimDevice(world, screenshots=False))
    settings = CaregiverSettings(allowed_apps=frozenset({SETTINGS}), language="zh", confirm_window_s=5, confirm_reminders=1)
    events: queue.Queue[Event] = queue.Queue()
    stop = session.begin_run()

    def work():
        gen = run_episode("关闭位置信息", device=device, policy=ScriptedPolicy.from_replies(replies), confirmer=session,
                          user=session, context=gate_context_from(settings, device.installed_apps()),
                          config=LoopConfig.from_settings(settings, patience=Patience(window_s=5, reminders=1)),
                          stop=stop, sleep=lambda s: None)
        for event in gen:
            events.put(event)
        session.end_run()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    return worker, events, device


def next_of(events: queue.Queue, cls):
    while True:
        event = events.get(timeout=30)
        if isinstance(event, cls):
            return event


def test_spoken_yes_and_an_answer_reach_the_loop_in_its_worker_thread():
    session = Session(lang="zh")
    worker, events, device = start(session, REPLIES)
    request = next_of(events, ConfirmationRequested)
    assert "安全设置" in request.question.zh
    assert session.wait_until_waiting() == "confirmation"
    session.hear("再说一遍")  # the request is read again, still waiting
    assert session.wait_until_waiting() == "confirmation"
    session.hear("确认")
    next_of(events, Paused)
    assert session.wait_until_waiting() == "reply"
    session.hear("没有了，谢谢")  # a free answer to call_user
    next_of(events, ConfirmationRequested)
    assert session.wait_until_waiting() == "confirmation"
    session.hear("取消")
    finished = next_of(events, Finished)
    worker.join(30)
    assert finished.outcome is Outcome.FINISHED
    assert len(device.dispatched) == 3  # open, row, the confirmed toggle; the second toggle was declined


def test_stop_from_the_ui_thread_ends_a_waiting_run():
    session = Session(lang="zh")
    worker, events, device = start(session, REPLIES)
    next_of(events, ConfirmationRequested)
    assert session.wait_until_waiting() == "confirmation"
    assert session.hear("停止").command is not None
    finished = next_of(events, Finished)
    worker.join(30)
    assert finished.outcome is Outcome.STOPPED
    assert len(device.dispatched) == 2
