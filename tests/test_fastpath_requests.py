"""The fast path end to end: natural requests in English and Chinese, several phrasings each, run as
`phonebuddy run GOAL --device sim --policy noop --fast-path` (a policy that never acts, so whatever gets
done is the fast path's), through the real loop, gate, confirmations and outcome check. Each request is
done and verified, answered from the phone without changing it, asked back (the one missing piece, never
a guess), declined at the confirmation (with the right read-back and nothing done), refused by the
allow-list, or handed over to the policy untouched.

The simulated phone is World(seed=0): Wi-Fi on (HomeNet), Bluetooth/airplane/dark/do-not-disturb off,
location on, brightness 40%, battery 88%, alarms 05:15/06:30/08:30, the time 14:34, a notification from
Grace Huang, texts from Alice Chen ("Call me when you are free.") and Leo Ma."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from assistant_core.toolgate import digits_aloud
from harness.fastpath import WONT
from phonebuddy import run_cli

ALLOWED = ["com.android.dialer", "com.android.messaging", "com.android.deskclock", "com.android.browser",
           "com.android.settings", "com.android.calendar", "com.phoneworld.chat", "com.android.email"]
NO_PHONE = [p for p in ALLOWED if p != "com.android.dialer"]
TOOLS = {"call", "send_text", "set_alarm", "set_timer", "set_setting", "open_link", "query"}


@dataclass(frozen=True)
class Case:
    goal: str
    expect: str  # done | answer | ask | wont | declined | denied | handed
    lang: str = "en"
    kind: str = ""  # the verify kind (done) or the question kind (answer)
    tool: str = ""  # the first action's kind
    says: tuple[str, ...] = ()  # words the answer, the question or the read-back must carry
    answers: tuple[str, ...] = ()
    allowed: tuple[str, ...] = tuple(ALLOWED)
    event: str = ""  # the sensitive event a done call/text leaves
    extra: dict = field(default_factory=dict)


def done(goal, kind, tool, lang="en", says=(), event="", **kw):
    return Case(goal, "done", lang, kind, tool, tuple(says), event=event, **kw)


def answer(goal, kind, says, lang="en"):
    return Case(goal, "answer", lang, kind, "query", tuple(says))


def ask(goal, says, lang="en"):
    return Case(goal, "ask", lang, says=tuple(says))


def wont(goal, lang="en"):
    return Case(goal, "wont", lang)


CASES = [
    # settings, several phrasings
    done("Turn off Wi-Fi", "wifi_off", "set_setting"), done("Switch off the wifi", "wifi_off", "set_setting"),
    done("关闭WLAN", "wifi_off", "set_setting", "zh"), done("把WLAN关掉", "wifi_off", "set_setting", "zh"),
    done("Turn on Bluetooth", "bluetooth_on", "set_setting"), done("Enable bluetooth", "bluetooth_on", "set_setting"),
    done("打开蓝牙", "bluetooth_on", "set_setting", "zh"),
    done("Turn on airplane mode", "airplane_on", "set_setting"), done("打开飞行模式", "airplane_on", "set_setting", "zh"),
    done("Turn on dark mode", "dark_theme_on", "set_setting"), done("Switch to dark mode", "dark_theme_on", "set_setting"),
    done("打开深色模式", "dark_theme_on", "set_setting", "zh"),
    done("Turn off location", "location_off", "set_setting"), done("关闭位置信息", "location_off", "set_setting", "zh"),
    done("Turn on do not disturb", "dnd_on", "set_setting"), done("打开勿扰模式", "dnd_on", "set_setting", "zh"),
    done("Set the brightness to 80%", "set_brightness", "set_setting"),
    done("把亮度调到80%", "set_brightness", "set_setting", "zh"),
    # alarms and timers
    done("Set an alarm for 7 am", "set_alarm", "set_alarm"), done("Wake me up at 6:45", "set_alarm", "set_alarm"),
    done("Set an alarm for half past seven", "set_alarm", "set_alarm"),
    done("定一个7点的闹钟", "set_alarm", "set_alarm", "zh"), done("明天早上7点叫我起床", "set_alarm", "set_alarm", "zh"),
    done("Start a 5 minute timer", "start_timer", "set_timer"), done("Set a timer for 10 minutes", "start_timer", "set_timer"),
    done("开一个5分钟的计时器", "start_timer", "set_timer", "zh"),
    # apps
    done("Open Calendar", "open_app", "open_app"), done("Open WeChat", "open_app", "open_app"),
    done("打开微信", "open_app", "open_app", "zh"),
    # calls and texts: confirmed with the contact, the number and the words read back
    done("Call Alice Chen", "call", "call", says=("Alice Chen", "198 4955 2291"), event="call_started"),
    done("Call Leo", "call", "call", says=("Leo Ma", "153 8954 7643"), event="call_started"),
    done("Call 138 0013 8000", "call", "call", says=("138 0013 8000",), event="call_started"),
    done("给陈爱丽打电话", "call", "call", "zh", says=("陈爱丽", "198 4955 2291"), event="call_started"),
    done("给马里奥打个电话", "call", "call", "zh", says=("马里奥", "153 8954 7643"), event="call_started"),
    done("Text Bob Li that I'm running late", "send_message", "send_text", says=("Bob Li", "134 6970 9032", "I'm running late"),
         event="message_sent"),
    done("Send a text to Grace Huang saying see you at noon", "send_message", "send_text",
         says=("Grace Huang", "see you at noon"), event="message_sent"),
    done("Text Bob Li that I am late and sorry", "send_message", "send_text", says=("I am late and sorry",),
         event="message_sent"),
    done("给李波发短信说我晚点到", "send_message", "send_text", "zh", says=("李波", "134 6970 9032", "我晚点到"),
         event="message_sent"),
    done("发短信给何奥莉说明天见", "send_message", "send_text", "zh", says=("何奥莉", "明天见"), event="message_sent"),
    # two requests in one sentence, both understood
    done("Turn on Bluetooth and turn off Wi-Fi", "bluetooth_on|wifi_off", "set_setting", extra={"actions": 2}),
    done("打开蓝牙然后关闭WLAN", "bluetooth_on|wifi_off", "set_setting", "zh", extra={"actions": 2}),
    # questions, answered from the phone, nothing changed
    answer("What's on my screen?", "ask_screen", ("Messages", "Clock")), answer("屏幕上有什么？", "ask_screen", ("信息",), "zh"),
    answer("Read my notifications", "ask_notifications", ("Grace Huang",)),
    answer("Do I have any notifications?", "ask_notifications", ("Grace Huang",)),
    answer("读一下我的通知", "ask_notifications", ("黄格蕾",), "zh"),
    answer("Read my last message from Alice Chen", "ask_messages", ("Call me when you are free.",)),
    answer("What did Leo Ma text me?", "ask_messages", ("See you at lunch tomorrow?",)),
    answer("读一下陈爱丽发来的最后一条短信", "ask_messages", ("有空给我回个电话。",), "zh"),
    answer("How much battery do I have?", "ask_battery", ("88%",)), answer("What's the battery level?", "ask_battery", ("88%",)),
    answer("还剩多少电？", "ask_battery", ("88%",), "zh"),
    answer("What time is it?", "ask_time", ("14:34",)), answer("现在几点了？", "ask_time", ("14:34",), "zh"),
    answer("When is my next alarm?", "ask_next_alarm", ("05:15", "tomorrow")),
    answer("下一个闹钟是几点？", "ask_next_alarm", ("05:15", "明天"), "zh"),
    answer("Which Wi-Fi am I connected to?", "ask_wifi_network", ("HomeNet",)),
    answer("我连的是哪个WiFi？", "ask_wifi_network", ("HomeNet",), "zh"),
    # asked back: the one missing piece, never a guess
    ask("Call Sophie", ("Sophie", "contacts")), ask("Call Mum", ("Mum",)), ask("给小明打电话", ("小明",), "zh"),
    ask("Call", ("Who should I call",)), ask("Set an alarm", ("what time",)), ask("设一个闹钟", ("几点",), "zh"),
    ask("Set a timer", ("how long",)), ask("Text Alice Chen", ("What should the message say",)),
    Case("Set an alarm", "done", "en", "", "set_alarm", answers=("7:30 am",), extra={"clock": "07:30"}),
    Case("Call Sophie", "done", "en", "", "call", says=("Alice Chen", "198 4955 2291"), answers=("Alice Chen",),
         event="call_started"),
    Case("Text Alice Chen", "done", "en", "", "send_text", says=("On my way",), answers=("On my way",),
         event="message_sent"),
    # negation (issue 28, Build 6): never acted on, never asked about; "OK, I won't"
    *[wont(g) for g in (
        "Turn off airplane mode? No, leave it", "Don't call Alice Chen", "Do not call Alice Chen", "Don't text Bob Li",
        "Never mind, don't call anyone", "Call Alice Chen? Never mind", "Call Alice Chen. Cancel that",
        "I didn't ask you to call Alice Chen", "Don't turn off Wi-Fi", "Do not turn on airplane mode",
        "Turn on airplane mode? No", "Text Bob Li that I'm running late. Actually, forget it", "Don't set an alarm",
        "No, don't call", "Please don't call Leo", "Turn off Wi-Fi. No, leave it", "Call Leo... never mind",
        "Don't send a text to Bob Li", "No need to call Alice Chen", "Nope, don't turn on Bluetooth",
        "Stop, don't call Alice Chen", "Call Alice Chen. No, don't", "Dont call Bob Li", "Never call Leo Ma")],
    *[wont(g, "zh") for g in (
        "给陈爱丽打电话？算了", "不要给陈爱丽打电话", "别给陈爱丽打电话", "千万不要给陈爱丽打电话", "千万别打电话给陈爱丽",
        "不用给陈爱丽打电话了", "我没让你打电话", "我没让你给李波发短信", "不要打电话", "别打电话", "不要发短信",
        "别给李波发短信", "不用发短信了", "算了，不打了", "给李波发短信说我晚点到，算了", "关闭WLAN？算了吧", "不要关闭WLAN",
        "别打开飞行模式", "不用打开蓝牙", "打开飞行模式？还是算了", "不要设闹钟", "先不要给陈爱丽打电话", "暂时不用打电话",
        "别关WLAN", "给陈爱丽打电话。不要了")],
    # ... and a take-back given as the answer to the fast path's question
    Case("Call Sophie", "wont", answers=("never mind",)), Case("给小明打电话", "wont", "zh", answers=("算了",)),
    Case("Text Alice Chen", "wont", answers=("No, leave it",)),
    # words that only look negative still work
    done("Text Bob Li that I don't feel well", "send_message", "send_text", says=("I don't feel well",),
         event="message_sent"),
    done("给李波发短信说别担心", "send_message", "send_text", "zh", says=("别担心",), event="message_sent"),
    done("Text Bob Li that I can't come, don't wait", "send_message", "send_text", says=("don't wait",),
         event="message_sent"),
    # declined at the confirmation: read back, nothing done
    Case("Call Alice Chen", "declined", says=("Alice Chen", "198 4955 2291")),
    Case("Text Bob Li that I'm running late", "declined", says=("Bob Li", "I'm running late")),
    Case("给陈爱丽打电话", "declined", "zh", says=("陈爱丽", "198 4955 2291")),
    # refused by the allow-list: the app that would handle it is not allowed
    Case("Open Wallet", "denied"), Case("打开钱包", "denied", "zh"),
    Case("Call Alice Chen", "denied", allowed=tuple(NO_PHONE)),
    Case("What did Leo Ma text me?", "denied", allowed=("com.android.dialer",)),
    # handed over to the policy, untouched
    Case("Turn on Wi-Fi and buy a gift card", "handed"), Case("Send Grace the time Alice texted me", "handed"),
    Case("Delete the photo of the beach", "handed"), Case("Sing me a song", "handed"),
    Case("Put the phone on silent", "handed"), Case("Pay the electricity bill", "handed"),
    Case("帮我买一张礼品卡", "handed", "zh"), Case("把手机调成静音", "handed", "zh"),
]


def _run(case: Case, capsys) -> dict:
    confirm = "no" if case.expect == "declined" else "yes"
    argv = [case.goal, "--device", "sim", "--policy", "noop", "--fast-path", "--no-history", "--json",
            "--lang", case.lang, "--confirm", confirm, "--allowed-apps", *case.allowed]
    for a in case.answers:
        argv += ["--answer", a]
    capsys.readouterr()
    run_cli.main(argv)
    return json.loads(capsys.readouterr().out)


def _heard(words: str, lang: str) -> str:
    """How `words` sound in a read-back: a phone number digit by digit (assistant_core.toolgate)."""
    if re.fullmatch(r"\+?[\d ]{7,}", words):
        return digits_aloud(words).get(lang)
    return words


def _said(out: dict, purpose: str | None = None) -> list[str]:
    return [e["text"]["en"] + " | " + e["text"]["zh"] for e in out["events"]
            if e["kind"] == "said" and (purpose is None or e.get("purpose") == purpose)]


def test_the_table_is_big_and_bilingual_enough():
    assert len(CASES) >= 60
    assert sum(c.lang == "zh" for c in CASES) >= 20
    assert {c.expect for c in CASES} == {"done", "answer", "ask", "wont", "declined", "denied", "handed"}
    for lang in ("en", "zh"):  # issue 28: at least 20 negative forms per language
        assert sum(c.expect == "wont" and c.lang == lang and not c.answers for c in CASES) >= 20


@pytest.mark.parametrize("case", CASES, ids=[f"{c.expect}:{c.lang}:{c.goal}" for c in CASES])
def test_a_request_end_to_end_with_a_policy_that_never_acts(case, capsys):
    out = _run(case, capsys)
    steps = out["steps"]
    tool_steps = [s for s in steps if s["action"]["kind"] in TOOLS | {"open_app"}]
    events = [e["kind"] for e in out["sensitive_events"]]
    verification = out["verification"]
    if case.expect == "done":
        assert out["outcome"] == "finished", out["summary"]
        first = tool_steps[0]
        assert first["action"]["kind"] == case.tool and first["executed"], first
        if case.extra.get("clock"):
            assert first["action"]["clock"] == case.extra["clock"]
        if not case.answers:
            # a sentence with two requests is checked by the kind the check recognises in it
            assert verification["status"] == "verified" and verification["kind"] in case.kind.split("|"), verification
        else:  # the answer is not in the request the check reads: it says it can't tell, never a false "verified"
            assert verification["status"] == "cannot_verify", verification
        if case.extra.get("actions"):
            assert len(tool_steps) == case.extra["actions"] and all(s["executed"] for s in tool_steps)
        if case.tool in ("call", "send_text"):
            asked = out["confirmations_asked"]
            assert len(asked) == 1, asked
            readback = asked[0]["zh" if case.lang == "zh" else "en"]
            assert all(_heard(w, case.lang) in readback for w in case.says), readback
            assert events == [case.event]
        elif case.kind in ("airplane_on", "wifi_off"):
            # A switch that can cut the phone's connection is asked about (Build 5 of issue 28); in-process the
            # link is not Wi-Fi, so Wi-Fi off is not.
            asked = out["confirmations_asked"]
            assert len(asked) == (1 if case.kind == "airplane_on" else 0) and events == [], asked
        else:
            assert out["confirmations_asked"] == [] and events == []
    elif case.expect == "answer":
        assert out["outcome"] == "finished"
        assert tool_steps and all(s["action"]["kind"] == "query" and s["executed"] for s in tool_steps)
        answers = _said(out, "output")
        assert answers and all(w in answers[0] for w in case.says), answers
        assert verification["kind"] == case.kind and verification["status"] == "cannot_verify"
        assert events == [] and out["confirmations_asked"] == []
    elif case.expect == "ask":
        assert out["outcome"] == "user_ended"
        questions = [e["message"]["en"] + e["message"]["zh"] for e in out["events"]
                     if e["kind"] == "paused" and e.get("reason") == "ask_user"]
        assert len(questions) == 1 and all(w.lower() in questions[0].lower() for w in case.says), questions
        assert not tool_steps and events == []
    elif case.expect == "wont":
        # Nothing done, nothing asked (no recipient question, no confirmation), "OK, I won't" said.
        asked_user = [e for e in out["events"] if e["kind"] == "paused" and e.get("reason") == "ask_user"]
        assert not tool_steps and events == [] and out["confirmations_asked"] == [], tool_steps
        assert len(asked_user) == len(case.answers), asked_user
        assert any(WONT.get(case.lang) in s for s in _said(out)), _said(out)
        assert out["outcome"] == "finished" and verification["status"] != "verified"
    elif case.expect == "declined":
        asked = out["confirmations_asked"]
        readback = asked[0]["zh" if case.lang == "zh" else "en"]
        assert len(asked) == 1 and all(_heard(w, case.lang) in readback for w in case.says), asked
        assert tool_steps and not tool_steps[0]["executed"] and tool_steps[0]["confirmation"] == "no"
        assert events == [] and verification["status"] == "not_verified"
    elif case.expect == "denied":
        assert tool_steps and tool_steps[0]["verdict"] == "deny" and tool_steps[0]["rule"] == "deny.app_not_allowed"
        assert not any(s["executed"] for s in tool_steps) and events == []
        assert verification["status"] != "verified"
    else:  # handed over: the fast path did nothing, the policy (noop) had the original goal
        assert not tool_steps and events == [] and out["confirmations_asked"] == []
        assert verification["status"] != "verified"
