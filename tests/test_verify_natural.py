"""Requests as people say them: "Send a text to Mum saying I am late", "发短信告诉妈妈我晚点到",
"Wake me up at 7 am", "明天早上7点叫我起床". Their parameters are found in English and Chinese; a message
text given without quotes is the gist, so a reworded body to the right contact is verified (and read
back), while a text to someone else, an unrelated body or no text at all is not; a quoted text stays exact.
Judged through the real adb server against the simulated phone, as in test_verify_adb.py."""

from __future__ import annotations

import pytest

from assistant_core.events import VerificationStatus
from assistant_core.i18n import Text
from harness.phoneworld.apps.phone import Contact
from harness.phoneworld.world import World
from harness.verify import KindRegistry, OutcomeVerifier, extract, read
from harness.verify.registry import parse_kind

pytest_plugins = ("tests.adb_fixtures",)

KINDS = KindRegistry.load()
MUM = "138 0013 8000"


# --- matching ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("goal", "recipient", "text"),
    [
        ("Send a text to Mum saying I am late", "Mum", "I am late"),
        ("Send a text message to Mum saying: I am late.", "Mum", "I am late"),
        ("Text Mum that I'll be late", "Mum", "I'll be late"),
        ("Text Mum: I'll be late", "Mum", "I'll be late"),
        ("Tell Alice Chen by text that dinner is at 7", "Alice Chen", "dinner is at 7"),
        ("Send Mum a text saying I'm on my way", "Mum", "I'm on my way"),
        ("Send a text saying I'm going to be late to Mum", "Mum", "I'm going to be late"),
        ("Let Mum know by text that I'm late", "Mum", "I'm late"),
        ("Please tell Mum that I'm late by text.", "Mum", "I'm late"),
        ("Can you text Mum that I'm late?", "Mum", "I'm late"),
        ("给妈妈发短信说我晚点到", "妈妈", "我晚点到"),
        ("发短信告诉妈妈我晚点到", "妈妈", "我晚点到"),
        ("发短信跟妈妈说我晚点到。", "妈妈", "我晚点到"),
        ("给妈妈发个短信，就说我晚点到", "妈妈", "我晚点到"),
        ("给妈妈发短信：我晚点到", "妈妈", "我晚点到"),
        ("帮我给宋妮娜发条短信告诉她明天的会取消了", "宋妮娜", "明天的会取消了"),
    ],
)
def test_natural_message_requests_give_recipient_and_unquoted_text(goal, recipient, text):
    match = KINDS.match(goal)
    assert match is not None and match.kind.name == "send_message" and not match.missing, (goal, match)
    assert (match.params.recipient, match.params.text, match.params.compare) == (recipient, text, "loose")


@pytest.mark.parametrize(
    ("goal", "text"),
    [('Text Nina Song: "I will be there at six"', "I will be there at six"),
     ('Text Mum that "I am late"', "I am late"),
     ("给宋妮娜发短信：“我六点到”", "我六点到"),
     ("给妈妈发短信说“我晚点到”", "我晚点到")],
)
def test_a_quoted_text_is_compared_exactly(goal, text):
    match = KINDS.match(goal)
    assert match.kind.name == "send_message" and match.params.text == text
    assert match.params.compare == "equals"  # no loose comparison for words the user quoted


def test_a_kind_file_says_what_an_unquoted_text_adds_and_a_bad_one_is_reported():
    raw = {"kind": "note_to_self", "check": "sms_sent", "describe": ["text myself", "给自己发短信"],
           "params": {"recipient": "+1 555 0100"}, "unquoted": {"compare": "loose"},
           "patterns": {"en": ["^note to self:? (?P<text>.+)$"]}}
    kinds = KindRegistry([parse_kind(raw, "t.json")])
    assert kinds.match("note to self buy milk").params.compare == "loose"
    assert kinds.match('note to self "buy milk"').params.compare == "equals"
    with pytest.raises(ValueError, match="unquoted"):
        parse_kind({**raw, "unquoted": {"colour": "red"}}, "t.json")


def test_other_channels_and_negations_are_not_claimed_as_texts_or_alarms():
    for goal, kind in [("Send a message to Mum on WeChat saying I am late", "send_chat_message"),
                       ("用微信给妈妈发消息说我晚点到", "send_chat_message")]:
        assert KINDS.match(goal).kind.name == kind, goal
    for goal in ("Don't wake me up at 7", "明天七点别叫我起床"):
        match = KINDS.match(goal)
        assert match is None or match.kind.name != "set_alarm", goal


@pytest.mark.parametrize(
    ("goal", "time"),
    [
        ("Wake me up at 7 am", "07:00"),
        ("Wake me up tomorrow at seven", "07:00"),
        ("Please wake me at half past six tomorrow morning.", "06:30"),
        ("Set an alarm for half past six", "06:30"),
        ("Set an alarm for 6:30", "06:30"),
        ("Set an alarm for 6.30", "06:30"),
        ("Set an alarm for 7", "07:00"),
        ("Set an alarm for 7 in the evening", "19:00"),
        ("Set an alarm for quarter to eight", "07:45"),
        ("Set an alarm for 4:10 pm labelled 'Walk the dog'.", "16:10"),
        ("Set an alarm for seven o'clock tomorrow", "07:00"),
        ("明天早上7点叫我起床", "07:00"),
        ("明天早上七点叫醒我", "07:00"),
        ("定一个6点半的闹钟", "06:30"),
        ("设一个七点的闹钟", "07:00"),
        ("把闹钟定在早上六点半", "06:30"),
        ("晚上十点一刻叫我", "22:15"),
    ],
)
def test_natural_alarm_requests_give_the_time(goal, time):
    match = KINDS.match(goal)
    assert match is not None and match.kind.name == "set_alarm" and not match.missing, (goal, match)
    assert match.params.time == time, goal


# --- time and gist parsing -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "clock"),
    [("7 am", "07:00"), ("6:30", "06:30"), ("6.30", "06:30"), ("6.30 p.m.", "18:30"), ("七点", "07:00"),
     ("6点半", "06:30"), ("七点一刻", "07:15"), ("明天早上7点", "07:00"), ("half past six", "06:30"),
     ("half past 6 pm", "18:30"), ("a quarter past seven", "07:15"), ("quarter to 8", "07:45"), ("20 to 7", "06:40"),
     ("seven o'clock", "07:00"), ("six thirty", "06:30"), ("eight forty-five", "08:45"), ("7", "07:00"),
     ("at 7", "07:00"), ("at seven", "07:00"), ("at 7 tomorrow", "07:00"), ("at 7 in the evening", "19:00"),
     ("tomorrow morning at 7", "07:00"), ("at 11 at night", "23:00"), ("this evening at 8", "20:00"),
     ("noon", "12:00"), ("at midnight", "00:00"), ("The bus leaves at 7:40 tomorrow.", "07:40"),
     # no time: a number that is not a clock time is not read as one
     ("meet me at one of the cafes", None), ("2 to 3 hours", None), ("for 7 labelled x", None), ("at 7%", None)],
)
def test_natural_clock_times(text, clock):
    assert extract.parse_clock(text) == clock, text


@pytest.mark.parametrize(
    ("wanted", "body"),
    [("I am late", "I'm running late"), ("I'll be late", "I will be running a bit late, sorry!"),
     ("dinner is at 7", "Dinner's at 7 pm"), ("dinner is at 7", "Dinner is at seven"),
     ("I will be there at six", "I'll be there at 6"), ("call me when you arrive", "Call me when you've arrived"),
     ("Thank you for the flowers", "Thanks for the flowers!"), ("我晚点到", "我会晚一点到"), ("我晚点到", "妈，我晚点到家"),
     ("我六点到", "我6点到"), ("明天的会取消了", "明天的会议取消了")],
)
def test_a_reworded_body_keeps_the_gist(wanted, body):
    assert extract.same_gist(wanted, body), (wanted, body, extract.gist_share(wanted, body))


@pytest.mark.parametrize(
    ("wanted", "body"),
    [("I am late", "Happy birthday!"), ("I am late", "I am not late"), ("I will be late", "I won't be late"),
     ("dinner is at 7", "Dinner is at 8"), ("dinner is at 7", "Lunch is at 7"), ("I will be there at six", "See you"),
     ("我晚点到", "生日快乐"), ("我晚点到", "我不会晚到"), ("我六点到", "我七点到"), ("我晚点到", "我已经到了"),
     ("Pick up milk, eggs and bread", "Pick up milk"), ("ok", "")],
)
def test_an_unrelated_or_contrary_body_does_not(wanted, body):
    assert not extract.same_gist(wanted, body), (wanted, body, extract.gist_share(wanted, body))


# --- judged through the adb server ------------------------------------------------------------------------------


def _world(phone, lang: str) -> World:
    """A fresh world, with Mum (妈妈) in the contacts, served as the phone."""
    world = World(seed=3, language=lang)
    world.phone.contacts.append(Contact("mum", Text("Mum", "妈妈"), MUM))
    with phone.lock:
        phone.world = world
    return world


def _judge(phone, probe, goal: str, lang: str, act):
    verifier = OutcomeVerifier(KINDS)
    world = _world(phone, lang)
    plan = verifier.plan(goal)
    assert plan.checkable, verifier.explain(plan)
    before = read(probe, plan.commands)
    with phone.lock:
        act(world)
    return verifier.judge(plan, before, read(probe, plan.commands))


def _send(number: str, body: str):
    def act(world: World) -> None:
        assert world.apps["com.android.messaging"].send(number, body)

    return act


def _other(lang: str) -> str:
    return World(seed=3, language=lang).people[0].phone  # someone in the contacts who is not Mum


@pytest.mark.parametrize(
    ("goal", "lang", "body"),
    [("Send a text to Mum saying I am late", "en", "I'm running late"),
     ("Text Mum that I'll be late", "en", "Sorry Mum, I will be a bit late"),
     ("给妈妈发短信说我晚点到", "zh", "我会晚一点到"),
     ("发短信告诉妈妈我晚点到", "zh", "妈，我晚点到家")],
)
def test_a_reworded_text_to_the_right_contact_is_verified_and_read_back(phone, probe, goal, lang, body):
    result = _judge(phone, probe, goal, lang, _send(MUM, body))
    assert result.status is VerificationStatus.VERIFIED, result.evidence
    who = "Mum" if lang == "en" else "妈妈"
    assert result.summary.en == f"I checked on the phone: a text to {who} was sent: \u201c{body}\u201d."
    assert result.summary.zh == f"我在手机上核实过了：已经给{who}发了短信：\u201c{body}\u201d。"
    assert "loose comparison" in result.evidence


@pytest.mark.parametrize(("goal", "lang"), [("Send a text to Mum saying I am late", "en"), ("发短信告诉妈妈我晚点到", "zh")])
def test_the_gist_to_someone_else_an_unrelated_body_or_nothing_is_not_verified(phone, probe, goal, lang):
    late = "I'm running late" if lang == "en" else "我会晚一点到"
    unrelated = "Happy birthday!" if lang == "en" else "生日快乐！"
    wrong_person = _judge(phone, probe, goal, lang, _send(_other(lang), late))
    assert wrong_person.status is VerificationStatus.NOT_VERIFIED, wrong_person.evidence
    assert late in wrong_person.summary.en and late in wrong_person.summary.zh  # says where it went instead
    off_topic = _judge(phone, probe, goal, lang, _send(MUM, unrelated))
    assert off_topic.status is VerificationStatus.NOT_VERIFIED, off_topic.evidence
    assert unrelated in off_topic.summary.en and unrelated in off_topic.summary.zh
    contrary = _judge(phone, probe, goal, lang, _send(MUM, "I'm not late" if lang == "en" else "我不会晚到"))
    assert contrary.status is VerificationStatus.NOT_VERIFIED, contrary.evidence
    nothing = _judge(phone, probe, goal, lang, lambda world: None)
    assert nothing.status is VerificationStatus.NOT_VERIFIED and "no new text" in nothing.summary.en
    # both: the right words to the wrong person never count, even beside an unrelated text to Mum
    both = _judge(phone, probe, goal, lang, lambda world: (_send(_other(lang), late)(world), _send(MUM, unrelated)(world)))
    assert both.status is VerificationStatus.NOT_VERIFIED, both.evidence


def test_a_quoted_text_still_needs_its_exact_words(phone, probe):
    reworded = _judge(phone, probe, 'Text Mum: "I am late"', "en", _send(MUM, "I'm running late"))
    assert reworded.status is VerificationStatus.NOT_VERIFIED, reworded.evidence
    exact = _judge(phone, probe, 'Text Mum: "I am late"', "en", _send(MUM, "I am late"))
    assert exact.status is VerificationStatus.VERIFIED, exact.evidence


def _alarm(time: str):
    def act(world: World) -> None:
        clock = world.apps["com.android.deskclock"]
        clock.s.draft_time = time
        clock.add()
        assert clock.alarm_at(time) is not None

    return act


@pytest.mark.parametrize(
    ("goal", "lang", "right", "wrong"),
    [("Wake me up at 7 am", "en", "07:00", "19:00"),
     ("Set an alarm for half past six", "en", "06:30", "06:00"),
     ("明天早上7点叫我起床", "zh", "07:00", "08:00"),
     ("定一个6点半的闹钟", "zh", "06:30", "18:30")],
)
def test_an_alarm_at_the_natural_time_is_verified_and_another_time_is_not(phone, probe, goal, lang, right, wrong):
    done = _judge(phone, probe, goal, lang, _alarm(right))
    assert done.status is VerificationStatus.VERIFIED, done.evidence
    assert right in done.summary.en and right in done.summary.zh
    other = _judge(phone, probe, goal, lang, _alarm(wrong))
    assert other.status is VerificationStatus.NOT_VERIFIED, other.evidence
