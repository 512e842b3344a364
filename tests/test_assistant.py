"""The Qt-free assistant (phonebuddy.assistant): what was heard or typed goes to exactly one route, in every
state of the turn, in English and Chinese; pending state comes from the loop's own events; the assistant is
the one writer of the conversation rows, with the run id."""

from __future__ import annotations

import pytest

from assistant_core import events as ev
from assistant_core.i18n import Text
from assistant_core.session import MetaCommand
from assistant_core.types import ConfirmAnswer
from phonebuddy.assistant import Assistant, Heard, Route, Target, TurnState, route

S = TurnState
IDLE, RUNNING, ASKING, CONFIRMING, HANDING_OVER = S.IDLE, S.RUNNING, S.ASKING, S.CONFIRMING, S.HANDING_OVER
STATES = (IDLE, RUNNING, ASKING, CONFIRMING, HANDING_OVER)

C, A, R, Q = Route.COMMAND, Route.ANSWER, Route.READ_BACK, Route.REQUEST
BUSY = "busy"  # a request while a run is on: REQUEST, not started

# (what was heard, en and zh) -> the route in each state: idle, running, asking, confirming, handing over.
TABLE = [
    ("stop", ("stop", "停止"), False, (C, C, C, C, C)),
    ("repeat", ("repeat", "再说一遍"), False, (C, C, A, A, A)),
    ("help", ("help", "帮助"), False, (C, C, A, A, A)),
    ("answer yes", ("yes, go ahead", "好的，确认"), False, (Q, BUSY, A, A, A)),
    ("answer no", ("no", "不要"), False, (Q, BUSY, A, A, A)),
    ("hand-over done", ("done", "好了"), False, (Q, BUSY, A, A, A)),
    ("unsure text", ("Call Sophie Tang", "给陈爱丽打电话"), True, (R, R, R, R, R)),
    ("unsure stop", ("stop", "停止"), True, (R, C, C, C, C)),  # a spoken stop wins, even an unsure one
    ("new request", ("Turn on Wi-Fi", "打开无线网络"), False, (Q, BUSY, A, A, A)),
]
CASES = [pytest.param(words[i], unsure, state, expected[j], id=f"{name}-{['en', 'zh'][i]}-{state}")
         for name, words, unsure, expected in TABLE for i in (0, 1) for j, state in enumerate(STATES)]


@pytest.mark.parametrize(("text", "unsure", "state", "expected"), CASES)
def test_every_heard_input_in_every_state_takes_exactly_one_route(text, unsure, state, expected):
    turn = route(Heard(text, unsure=unsure), state)
    want = Q if expected == BUSY else expected
    assert turn.route is want, (text, state, turn)
    assert turn.busy == (expected == BUSY)
    if want is C:
        assert turn.command is not None
    if want is A:
        assert turn.target is (Target.CONFIRMATION if state is CONFIRMING else Target.QUESTION)


@pytest.mark.parametrize(("text", "answer"), [("yes, go ahead", ConfirmAnswer.YES), ("好的，确认", ConfirmAnswer.YES),
                                              ("don't", ConfirmAnswer.NO), ("算了", ConfirmAnswer.NO),
                                              ("say that again", ConfirmAnswer.REPEAT), ("再说一遍", ConfirmAnswer.REPEAT),
                                              ("Turn on Wi-Fi", None), ("打开无线网络", None)])
def test_a_spoken_answer_to_the_confirmation_is_read_as_yes_no_repeat_or_asked_again(text, answer):
    assert route(Heard(text), CONFIRMING).answer is answer


@pytest.mark.parametrize("text", ["yes", "确认"])
def test_typed_text_never_answers_the_gates_question(text):
    turn = route(Heard(text, typed=True), CONFIRMING)
    assert turn.route is Q and turn.busy  # the dialog's keys or a spoken answer do


@pytest.mark.parametrize(("said", "expected", "answer"), [
    ("yes", A, ConfirmAnswer.YES), ("是的", A, ConfirmAnswer.YES), ("no", A, ConfirmAnswer.NO),
    ("不是", A, ConfirmAnswer.NO), ("maybe later", R, None), ("stop", C, None), ("停止", C, None)])
def test_a_read_back_waits_for_yes_or_no(said, expected, answer):
    from phonebuddy.assistant import ReadBack

    for state in STATES:
        turn = route(Heard(said), state, read_back=ReadBack("Call Sophie Tang"))
        assert turn.route is expected and turn.answer is answer, (state, turn)


def test_nothing_heard_is_its_own_route():
    for state in STATES:
        assert route(Heard("  "), state).route is Route.NOTHING


class Front:
    """A front end that records what the assistant asked of it."""

    def __init__(self):
        self.calls: list[tuple[str, object]] = []
        self.said: list[tuple[str | None, str, str | None]] = []

    def say(self, kind, text, cue):
        self.said.append((kind, text, cue))

    def command(self, command):
        self.calls.append(("command", command))

    def confirm(self, answer):
        self.calls.append(("confirm", answer))

    def reply(self, text):
        self.calls.append(("reply", text))

    def elsewhere(self, text):
        self.calls.append(("elsewhere", text))

    def start(self, goal):
        self.calls.append(("start", goal))
        return True


def _in_state(state: TurnState, front: Front, history=None) -> Assistant:
    """An assistant brought into `state` the way a run does: a request, then the loop's own events."""
    assistant = Assistant(lang="en", front=front, history=history)
    if state is not IDLE:
        assert assistant.request("Text Nina")
    if state is ASKING:
        assistant.on_event(ev.Paused(0, ev.PauseReason.ASK_USER, Text("Which Nina?", "哪个妮娜？")))
    elif state is HANDING_OVER:
        assistant.on_event(ev.Paused(0, ev.PauseReason.HANDOVER, Text("Please type the PIN.", "请输入密码。")))
    elif state is CONFIRMING:
        assistant.on_event(ev.ConfirmationRequested(0, Text("Send it?", "发送吗？")))
    assert assistant.state is state
    front.calls.clear()
    return assistant


@pytest.mark.parametrize(("text", "unsure", "state", "expected"), CASES)
def test_the_assistant_carries_out_exactly_the_one_route(text, unsure, state, expected):
    """On the assistant itself: one hearing asks the front end for exactly one thing (or only says)."""
    front = Front()
    assistant = _in_state(state, front)
    turn = assistant.hear(Heard(text, unsure=unsure))
    kinds = [name for name, _ in front.calls]
    if turn.route is C:
        assert kinds == ["command"]
    elif turn.route is A:
        assert kinds == (["confirm"] if state is CONFIRMING and turn.answer is not None
                         else [] if state is CONFIRMING else ["reply"])
    elif turn.route is R:
        assert kinds == [] and front.said[-1][2] == "confirm" and assistant.read_back is not None
    elif expected == BUSY:
        assert kinds == [] and front.said[-1][2] == "info"
    else:
        assert kinds == ["start"]


def test_a_read_back_confirmed_is_then_acted_on_once():
    front = Front()
    assistant = _in_state(IDLE, front)
    assistant.hear(Heard("Call Sophie Tang", unsure=True))
    assistant.hear(Heard("no"))
    assert front.calls == [] and assistant.read_back is None  # "say it again"
    assistant.hear(Heard("Call Sophie Tang", unsure=True))
    assistant.hear(Heard("hmm"))  # unclear: asked again
    assert front.calls == [] and assistant.read_back is not None
    assistant.hear(Heard("yes"))
    assert front.calls == [("start", "Call Sophie Tang")] and assistant.state is RUNNING


def test_pending_state_follows_the_loops_events():
    front = Front()
    assistant = _in_state(ASKING, front)
    assistant.on_event(ev.Resumed(0, ev.PauseReason.ASK_USER, "Nina Song"))
    assert assistant.state is RUNNING
    assistant.on_event(ev.ConfirmationRequested(1, Text("Send it?", "发送吗？")))
    assert assistant.state is CONFIRMING
    assistant.on_event(ev.ConfirmationAnswered(1, ConfirmAnswer.NO))
    assert assistant.state is RUNNING
    assistant.on_event(ev.Paused(2, ev.PauseReason.DEVICE_LOST, Text("Lost.", "断开了。")))
    assert assistant.state is RUNNING  # a lost phone asks the user nothing
    assistant.ended()
    assert assistant.state is IDLE


def test_the_assistant_writes_the_conversation_with_the_run_id(tmp_path):
    """The loop writes no conversation rows; the assistant writes the request, what was said and asked,
    the answers and the ending, each with the run id, and commands between runs without one."""
    from assistant_core.confirm import FixedConfirmer
    from assistant_core.history import HistoryStore
    from assistant_core.loop import RunInfo, ScriptedUser, run_episode
    from assistant_core.policies import ScriptedPolicy
    from assistant_core.safety import GateContext
    from harness.phoneworld import SimDevice, World
    from tests.core_fixtures import tool_call

    history = HistoryStore(tmp_path / "h.db")
    device = SimDevice(World(seed=0, language="zh"))
    front = Front()
    assistant = Assistant(lang="zh", front=front, history=history)
    policy = ScriptedPolicy.from_replies([tool_call("call_user", text="写给谁？"), tool_call("finish", text="好了")])
    assert assistant.hear(Heard("给安娜发消息", typed=True)).route is Q
    result = assistant.drive(run_episode(
        "给安娜发消息", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
        context=GateContext(allowed_apps=frozenset({"com.android.settings"})), user=ScriptedUser(["安娜"]),
        history=history, sleep=lambda s: None, info=RunInfo(started=assistant.run_started)))
    assistant.hear(Heard("帮助"))  # a command between runs: recorded without a run id
    rows = list(history._open()["conversation"].rows)
    in_run = [(r["role"], r["text"]) for r in rows if r["run_id"] == result.run_id]
    assert in_run[0] == ("user", "给安娜发消息") and ("assistant", "写给谁？") in in_run and ("user", "安娜") in in_run
    from assistant_core.endings import ending_text

    assert in_run[-1] == ("assistant", ending_text(result).get("zh"))
    assert [r["run_id"] for r in rows][-1] is None and rows[-1]["text"] == "您：帮助"
    assert [h.table for h in history.search("安娜")].count("conversation") >= 1
    assert front.calls[-1] == ("command", MetaCommand.HELP)
    history.close()
