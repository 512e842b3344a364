"""Issue 28, Build 2 and Build 5: a tool's read-back comes from the phone, and a switch that can cut the
phone's connection needs Settings and a yes.

Each run goes through the real parser, loop and gate on the simulated phone, whose contacts the gate's
context reads from the contacts provider (`content query`, as the fast path and the outcome checks do):
- a name that does not match the number is said as such, with the name the phone gives the number and
  the number digit by digit; the model's own words for the recipient are never read out;
- an unknown number is "a number that is not in your contacts";
- a long message is read back in full; one that ends in a card number is handed to the user, not sent;
- bidi controls and invisible characters never reach the question;
- airplane mode on (and Wi-Fi off over a Wi-Fi link) is refused when Settings is not allowed and asked
  about when it is; with "no" nothing changes.
In English and Chinese.
"""

from __future__ import annotations

import pytest

from assistant_core.events import ConfirmationRequested, Gated, Paused
from assistant_core.safety import GateContext, SafetyGate
from assistant_core.toolgate import digits_aloud
from assistant_core.types import Action, ActionKind, ConfirmAnswer, Observation, Verdict
from harness.phoneworld import World
from harness.tools import link_over_wifi
from tests.test_tools_gate import ALL, DIALER, MESSAGING, _people, reply, run

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff"


def question(events, lang: str) -> str:
    asked = [e for e in events if isinstance(e, ConfirmationRequested)]
    assert len(asked) == 1, asked
    return asked[0].question.get(lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_name_that_does_not_match_the_number_is_said_as_such(lang):
    world = World(seed=0, language=lang)
    alice, bob = _people(world)[0], _people(world)[1]
    # The model says "Alice" but dials Bob's number.
    result, events = run(world, [reply("call", number=bob.phone, contact=alice.name.get(lang))], lang=lang)
    said = question(events, lang)
    assert digits_aloud(bob.phone).get(lang) in said and bob.name.get(lang) in said
    assert ("not " + alice.name.en) in said if lang == "en" else f"不是{alice.name.zh}" in said
    assert world.apps[DIALER].state.calls == [] and not result.steps[0].executed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_number_is_said_as_not_in_your_contacts_and_the_models_words_are_not(lang):
    world = World(seed=0, language=lang)
    alice = _people(world)[0]
    words = "Alice Chen, your daughter, on her new mobile" if lang == "en" else "陈爱丽，你女儿的新手机"
    result, events = run(world, [reply("call", number="+1 900 555 0100", contact=words)], lang=lang)
    said = question(events, lang)
    assert digits_aloud("+1 900 555 0100").get(lang) in said
    assert ("plus 1, 9 0 0, 5 5 5, 0 1 0 0" if lang == "en" else "加 1, 9 0 0, 5 5 5, 0 1 0 0") in said
    assert ("a number that is not in your contacts" if lang == "en" else "这个号码不在你的通讯录里") in said
    assert "daughter" not in said and "女儿" not in said and "new m" not in said
    assert alice.name.get(lang) not in said  # the model's claim is never read out as the recipient
    assert world.apps[DIALER].state.calls == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_known_name_at_an_unknown_number_is_said_as_such(lang):
    world = World(seed=0, language=lang)
    alice = _people(world)[0]
    _, events = run(world, [reply("call", number="+1 900 555 0100", contact=alice.name.get(lang))], lang=lang)
    said = question(events, lang)
    assert ("not in your contacts; your contacts have " + alice.name.en) in said if lang == "en" else (
        f"通讯录里{alice.name.zh}的号码是另一个") in said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_message_is_read_back_in_full(lang):
    world = World(seed=0, language=lang)
    bob = _people(world)[1]
    text = ("Hi Bob, the plumber comes on Tuesday between nine and eleven, please leave the side gate open "
            "and tell Mum that I will bring the soup and the new glasses on Wednesday evening after work.")
    assert len(text) > 150
    result, events = run(world, [reply("send_text", number=bob.phone, text=text)], lang=lang)
    said = question(events, lang)
    assert text in said and "…" not in said
    assert world.apps[MESSAGING].sent_to(bob.phone) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("card", ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111"])
def test_a_message_ending_in_a_card_number_is_handed_over_not_sent(lang, card):
    world = World(seed=0, language=lang)
    bob = _people(world)[1]
    text = "Hi Bob, here is what you asked for so you can book the tickets for us this weekend: " + card
    result, events = run(world, [reply("send_text", number=bob.phone, text=text)], answer=ConfirmAnswer.YES, lang=lang)
    gated = [e.decision for e in events if isinstance(e, Gated) and e.action.kind is ActionKind.SEND_TEXT]
    assert [(d.verdict, d.rule) for d in gated] == [(Verdict.DENY, "handover.secret_field")]
    paused = [e.message.get(lang) for e in events if isinstance(e, Paused)]
    assert paused and ("card number" in paused[0] if lang == "en" else "卡号" in paused[0])
    assert not any(s.executed for s in result.steps) and world.apps[MESSAGING].sent_to(bob.phone) == []
    assert not [e for e in events if isinstance(e, ConfirmationRequested)]
    # The same check as typing it on the screen: the GUI path hands the same text over.
    gate = SafetyGate()
    typed = gate.check(Action.type_text(text), Observation(1080, 2400, MESSAGING, elements=()),
                       GateContext(allowed_apps=ALL))
    assert typed.rule == "handover.secret_field"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bidi_controls_and_invisible_characters_never_reach_the_question(lang):
    world = World(seed=0, language=lang)
    bob = _people(world)[1]
    name = bob.name.get(lang)
    spoofed_name = name[:2] + "\u202e" + name[2:] + "\u200b"
    text = "Meet at\u202e 5 pm\u2066 by the \u200bgate\u061c\ufeff"
    # (A number with them in it is no number: the action is refused before the gate, tests/test_core_contracts.)
    _, events = run(world, [reply("send_text", number=bob.phone, text=text, contact=spoofed_name)], lang=lang)
    said = question(events, lang)
    assert not any(ch in said for ch in BIDI), [hex(ord(c)) for c in said if c in BIDI]
    asked = next(e for e in events if isinstance(e, ConfirmationRequested))
    for other in ("en", "zh"):
        shown = asked.question.get(other) + asked.request.spoken(other)
        assert not any(ch in shown for ch in BIDI)
    assert "Meet at 5 pm by the gate" in said and name in said and digits_aloud(bob.phone).get(lang) in said


# --- Build 5: switches that can cut the connection ----------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_airplane_mode_needs_settings_allowed_and_a_yes(lang):
    world = World(seed=0, language=lang)
    settings = world.apps["com.android.settings"]
    result, _ = run(world, [reply("set_setting", setting="airplane_mode", value="on")],
                    allowed=ALL - {"com.android.settings"}, answer=ConfirmAnswer.YES, lang=lang)
    step = result.steps[0]
    assert step.decision.verdict is Verdict.DENY and step.decision.rule == "deny.app_not_allowed" and not step.executed
    assert settings.state.airplane is False
    result, events = run(world, [reply("set_setting", setting="airplane_mode", value="on")], lang=lang)
    said = question(events, lang)
    assert ("airplane mode" if lang == "en" else "飞行模式") in said
    assert result.steps[0].decision.rule == "confirm.cuts_connection" and settings.state.airplane is False
    result, _ = run(world, [reply("set_setting", setting="airplane_mode", value="on")], answer=ConfirmAnswer.YES,
                    lang=lang)
    assert result.steps[0].executed and settings.state.airplane is True
    # Turning it off again cuts nothing: a quick setting as before.
    result, events = run(world, [reply("set_setting", setting="airplane_mode", value="off")],
                         allowed=ALL - {"com.android.settings"}, lang=lang)
    assert result.steps[0].executed and settings.state.airplane is False
    assert not [e for e in events if isinstance(e, ConfirmationRequested)]


def test_wifi_off_is_asked_about_only_when_the_link_may_be_wifi():
    gate = SafetyGate()
    obs = Observation(1080, 2400, "com.android.launcher3", elements=())
    off = Action.set_setting("wifi", "off")
    for over_wifi in (True, None):
        ctx = GateContext(allowed_apps=ALL, link_over_wifi=over_wifi)
        assert gate.check(off, obs, ctx).rule == "confirm.cuts_connection"
        ctx = GateContext(allowed_apps=ALL - {"com.android.settings"}, link_over_wifi=over_wifi)
        assert gate.check(off, obs, ctx).rule == "deny.app_not_allowed"
    assert gate.check(off, obs, GateContext(allowed_apps=ALL, link_over_wifi=False)).verdict is Verdict.ALLOW
    assert gate.check(Action.set_setting("wifi", "on"), obs, GateContext(allowed_apps=frozenset())).verdict is Verdict.ALLOW


class _Serial:
    def __init__(self, serial: str):
        self.serial = serial


@pytest.mark.parametrize("serial, over_wifi", [
    ("192.168.1.20:5555", True), ("adb-R58M12ABCDE-xyz._adb-tls-connect._tcp", True), ("10.0.0.7:41234", True),
    ("127.0.0.1:5555", False), ("localhost:5037", False), ("R58M12ABCDE", False), ("emulator-5554", False),
])
def test_the_link_is_wifi_for_adb_over_tcp_to_another_host(serial, over_wifi):
    assert link_over_wifi(_Serial(serial)) is over_wifi


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_a_tool_reports_carries_no_bidi_controls_either(lang):
    from assistant_core.events import Said

    world = World(seed=0, language=lang)
    world.notify(MESSAGING, "Gr\u202eace", "Lunch\u200b at\u2066 noon?")  # an allowed app
    _, events = run(world, [reply("query", query="notifications")], lang=lang)
    said = [e.text.get(lang) for e in events if isinstance(e, Said)]
    assert any("Lunch at noon?" in t for t in said), said
    assert not any(ch in t for t in said for ch in BIDI)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_message_typed_on_the_screen_is_read_back_in_full_too(lang):
    """The GUI path: typed into a conversation's composer, then Send tapped (it was clipped at 60)."""
    from harness.phoneworld.apps.base import Route
    from tests.gate_properties import DIALECTS

    world = World(seed=0, language=lang)
    world.launch(MESSAGING)
    world.push(MESSAGING, Route("thread", "+1 555 0100"))
    field = next(e for e in world.elements() if e.resource_id.endswith(":id/compose_message_text"))
    world.tap(*field.center)
    text = ("Hi, the plumber comes on Tuesday between nine and eleven, please leave the side gate open and "
            "tell Mum I will bring the soup on Wednesday.")
    write = DIALECTS["tool_json"][1]
    send = next(e for e in world.elements() if e.clickable and e.label.lower() in ("send", "发送"))
    replies = [write(Action.type_text(text)), write(Action.click(*send.center))]
    result, events = run(world, replies, lang=lang)
    said = question(events, lang)
    assert text in said and "…" not in said
    assert world.apps[MESSAGING].sent_to("+1 555 0100") == []
