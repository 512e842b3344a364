"""The fast path's planner (pure, no phone): it never guesses a recipient, a number or a time; it asks for
the one missing piece and uses the answer; it hands over whatever its plan would leave out. And the same
asking-back end to end with the loop, on a phone with two contacts of the same name."""

from __future__ import annotations

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import Outcome
from assistant_core.i18n import Text
from assistant_core.loop import LoopConfig, ScriptedUser, run_episode
from assistant_core.policies import NoopPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ActionKind, ConfirmAnswer, Exchange, Observation, Step
from harness.fastpath import Contact, FastPathPolicy, FastPlanner, PhoneFacts, PlanStatus
from harness.phoneworld import SimDevice, World
from harness.phoneworld.apps.phone import Contact as SimContact
from harness.verify import KindRegistry, OutcomeVerifier
from tests.core_fixtures import drain

PLANNER = FastPlanner()
FACTS = PhoneFacts((Contact("Sophie Tang", ("138 0000 1111",)), Contact("Sophie Li", ("139 0000 2222",)),
                    Contact("Mum", ("+86 135 0000 3333",)), Contact("王芳", ("136 0000 4444",)),
                    Contact("王芳芳", ("137 0000 5555",)), Contact("No Number", ())),
                   {"com.android.calendar": "Calendar"})


def test_two_contacts_of_that_name_are_asked_about_by_name():
    plan = PLANNER.plan("Call Sophie", FACTS)
    assert plan.status is PlanStatus.ASK and plan.slot == "recipient"
    assert plan.question.en == "Which Sophie: Sophie Tang or Sophie Li?"
    assert "Sophie Tang" in plan.question.zh and "还是" in plan.question.zh
    chosen = PLANNER.plan("Call Sophie", FACTS, answers=["Sophie Li"])
    assert chosen.status is PlanStatus.ACT and chosen.actions[0].number == "139 0000 2222"
    by_part = PLANNER.plan("Call Sophie", FACTS, answers=["Li"])  # what tells them apart is enough
    assert by_part.actions[0].contact == "Sophie Li"
    unclear = PLANNER.plan("Call Sophie", FACTS, answers=["the other one"])
    assert unclear.status is PlanStatus.HAND_OVER  # never a guess


@pytest.mark.parametrize("goal, number", [("Call Mum", "+86 135 0000 3333"), ("call mum.", "+86 135 0000 3333"),
                                          ("给王芳打电话", "136 0000 4444"), ("Call 10086 0000", "10086 0000")])
def test_an_exact_name_or_a_number_is_used(goal, number):
    plan = PLANNER.plan(goal, FACTS)
    assert plan.status is PlanStatus.ACT and plan.actions[0].number == number


def test_a_contact_without_a_number_or_an_unknown_one_is_asked_about():
    assert PLANNER.plan("Call No Number", FACTS).status is PlanStatus.ASK
    assert PLANNER.plan("Call Dad", FACTS).question.en.startswith("I can't find “Dad”")


@pytest.mark.parametrize("goal, slot, answer, check", [
    ("Set an alarm", "time", "7:30 am", lambda a: a.clock == "07:30"),
    ("设一个闹钟", "time", "早上6点半", lambda a: a.clock == "06:30"),
    ("Set a timer", "minutes", "10 minutes", lambda a: a.duration_ms == 600_000),
    ("Text Mum", "text", "On my way", lambda a: a.text == "On my way" and a.number == "+86 135 0000 3333"),
])
def test_the_missing_piece_is_asked_for_and_the_answer_used(goal, slot, answer, check):
    asked = PLANNER.plan(goal, FACTS)
    assert asked.status is PlanStatus.ASK and asked.slot == slot and not asked.actions
    done = PLANNER.plan(goal, FACTS, answers=[answer])
    assert done.status is PlanStatus.ACT and check(done.actions[0])


def test_an_answer_that_does_not_give_the_time_is_not_guessed():
    assert PLANNER.plan("Set an alarm", FACTS, answers=["whenever"]).status is PlanStatus.HAND_OVER


@pytest.mark.parametrize("goal", [
    "Set an alarm for 7 am every weekday", "每天早上7点的闹钟", "Set an alarm for 7 am with the label",
    "Turn on Wi-Fi and buy a gift card", "Dial 15732886541 on the keypad and call it.",
    "Send Sophie Tang the time Mum texted me", "Open Calculator", "Put the phone on silent",
])
def test_what_the_plan_would_leave_out_goes_to_the_model(goal):
    assert PLANNER.plan(goal, FACTS).status is PlanStatus.HAND_OVER


def test_an_alarm_label_is_kept():
    plan = PLANNER.plan("Set an alarm for 4:10 pm labelled 'Walk the dog'.", FACTS)
    assert plan.actions[0].clock == "16:10" and plan.actions[0].text == "Walk the dog"
    assert PLANNER.plan("设一个下午4点10分的闹钟，标签是“遛狗”。", FACTS).actions[0].text == "遛狗"


def test_and_inside_a_message_is_not_a_second_request():
    plan = PLANNER.plan("Text Mum that I am late and sorry", FACTS)
    assert [a.kind for a in plan.actions] == [ActionKind.SEND_TEXT] and plan.actions[0].text == "I am late and sorry"
    two = PLANNER.plan("Turn on Bluetooth and turn off Wi-Fi", FACTS)
    assert [a.setting.value for a in two.actions] == ["bluetooth", "wifi"]


class _Fallback:
    """Records what the model would get once the fast path hands over."""

    def __init__(self):
        self.calls = []

    def propose(self, goal, observation, history):
        from assistant_core.types import Action, Proposal

        self.calls.append((goal, observation.exchanges))
        return Proposal(Action.finish(""))


def _seen(*exchanges):
    return Observation(1080, 2400, "com.android.launcher", exchanges=tuple(exchanges))


@pytest.mark.parametrize("goal, lang, answer, check", [
    ("Text Mum", "en", "On my way (see you at 5)\nlove you",
     lambda a: a.text == "On my way (see you at 5)\nlove you" and a.number == "+86 135 0000 3333"),
    ("给王芳发短信", "zh", "我晚点到（大概七点）", lambda a: a.text == "我晚点到（大概七点）" and a.number == "136 0000 4444"),
    ("Call Sophie", "en", "Sophie Li", lambda a: a.number == "139 0000 2222"),
    ("设一个闹钟", "zh", "早上6点半", lambda a: a.clock == "06:30"),
])
def test_the_fast_path_acts_on_the_typed_answer(goal, lang, answer, check):
    """The answer comes as the loop's typed exchange on the observation, read as it is: a message with a
    line break and brackets (which text glued onto the goal could not carry back) is sent word for word."""
    fallback = _Fallback()
    policy = FastPathPolicy(PLANNER, fallback=fallback, facts=FACTS, lang=lang)
    asked = policy.propose(goal, _seen(), [])
    assert asked.action.kind is ActionKind.CALL_USER
    question = Exchange(PLANNER.plan(goal, FACTS).question, answer, step=0)
    acted = policy.propose(goal, _seen(question), [Step(0, asked.action, executed=True)])
    assert acted.action.is_tool and check(acted.action)
    assert fallback.calls == []


def test_the_fast_path_never_reads_answers_out_of_the_goal():
    """A goal that happens to hold the old glued-on form is a request, not an answer; the model gets the
    goal and the typed answers as they are when the fast path hands over."""
    fallback = _Fallback()
    policy = FastPathPolicy(PLANNER, fallback=fallback, facts=FACTS)
    glued = "Call Sophie\n(The user said: Sophie Li)"
    first = policy.propose(glued, _seen(), [])
    assert not (first.action.is_tool and first.action.number == "139 0000 2222")  # no call to Sophie Li
    fallback = _Fallback()
    policy = FastPathPolicy(PLANNER, fallback=fallback, facts=FACTS)
    unclear = Exchange(PLANNER.plan("Call Sophie", FACTS).question, "the other one")
    policy.propose("Call Sophie", _seen(unclear), [])
    assert fallback.calls == [("Call Sophie", (unclear,))]


def test_which_one_asked_and_answered_through_the_loop():
    world = World(seed=0)
    dialer = world.apps["com.android.dialer"]
    dialer.state.contacts.append(SimContact("c900", Text("Alice Wang", "王爱丽"), "188 0000 9999"))
    device = SimDevice(world, screenshots=False)
    user = ScriptedUser(["Alice Wang"])
    policy = FastPathPolicy(FastPlanner(KindRegistry.load()), fallback=NoopPolicy(), device=device)
    context = GateContext(allowed_apps=frozenset({"com.android.dialer"}), app_labels=device.installed_apps())
    gen = run_episode("Call Alice", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.YES),
                      context=context, user=user, config=LoopConfig(step_budget=6), sleep=lambda s: None,
                      outcome_check=OutcomeVerifier(KindRegistry.load()))
    result = drain(gen)
    assert [q.en for q in user.questions] == ["Which Alice: Alice Chen or Alice Wang?"]
    assert result.outcome is Outcome.FINISHED
    assert [c.number for c in dialer.state.calls] == ["18800009999"]  # Alice Wang's, never Alice Chen's


@pytest.mark.parametrize("goal, answer, lang", [("Set an alarm", "7:30 am", "en"), ("设一个闹钟", "早上7点半", "zh")])
def test_an_ask_user_request_is_asked_and_answered_through_the_loop(goal, answer, lang):
    """The fast path asks for the time, the loop keeps the answer as a typed exchange, and the alarm is set
    from it; the run's goal is still the request as said."""
    world = World(seed=0, language=lang)
    device = SimDevice(world, screenshots=False)
    user = ScriptedUser([answer])
    policy = FastPathPolicy(FastPlanner(KindRegistry.load()), fallback=NoopPolicy(), device=device, lang=lang)
    context = GateContext(allowed_apps=frozenset({"com.android.deskclock"}), app_labels=device.installed_apps())
    before = {a.id for a in world.deskclock.alarms}
    gen = run_episode(goal, device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.YES),
                      context=context, user=user, config=LoopConfig(step_budget=6, lang=lang), sleep=lambda s: None)
    result = drain(gen)
    assert len(user.questions) == 1 and not policy.handed_over
    assert result.outcome is Outcome.FINISHED and result.goal == goal
    assert [(e.question, e.answer) for e in result.exchanges] == [(user.questions[0], answer)]
    new = [a for a in world.deskclock.alarms if a.id not in before]
    assert [a.time for a in new] == ["07:30"]


@pytest.mark.parametrize("goal", ["不要打电话", "别给王芳打电话", "千万不要打电话", "我没让你打电话", "给王芳打电话？算了",
                                  "Don't call", "Call Mum? Never mind", "Turn off airplane mode? No, leave it"])
def test_a_negation_is_never_a_plan_and_never_a_question(goal):
    """Issue 28: 不要/别/千万不要/我没让你 + a call was answered with "要打给谁？", and a confused user who
    gave a name got a call proposed."""
    plan = PLANNER.plan(goal, FACTS)
    assert plan.status is PlanStatus.DECLINE and not plan.actions and plan.question is None
    assert PLANNER.plan(goal, FACTS, answers=["王芳"]).status is PlanStatus.DECLINE


def test_a_take_back_as_the_answer_drops_the_request_but_a_message_may_say_dont():
    assert PLANNER.plan("Call Sophie", FACTS, answers=["never mind"]).status is PlanStatus.DECLINE
    assert PLANNER.plan("给王芳发短信", FACTS, answers=["算了"]).status is PlanStatus.DECLINE
    text = PLANNER.plan("Text Mum", FACTS, answers=["Don't wait for me"])
    assert text.status is PlanStatus.ACT and text.actions[0].text == "Don't wait for me"
