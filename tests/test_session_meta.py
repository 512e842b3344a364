"""Meta-commands are understood before anything reaches the model, in English and Chinese; confirmation
requests read back what, whom, how much and which app."""

from __future__ import annotations

import pytest

from assistant_core.confirm import (
    ConfirmationRequest,
    FixedConfirmer,
    Patience,
    ScriptedConfirmer,
    build_request,
    confirmation_flow,
)
from assistant_core.safety import GateContext, SafetyGate
from assistant_core.session import MetaCommand, parse_meta
from assistant_core.types import ConfirmAnswer
from tests.core_fixtures import button, el, heading, screen, tap


@pytest.mark.parametrize(
    ("utterance", "command"),
    [
        ("stop", MetaCommand.STOP), ("Stop!", MetaCommand.STOP), ("please stop", MetaCommand.STOP),
        ("停止", MetaCommand.STOP), ("停下来。", MetaCommand.STOP), ("repeat", MetaCommand.REPEAT),
        ("再说一遍", MetaCommand.REPEAT), ("Say that again?", MetaCommand.REPEAT), ("yes", MetaCommand.YES),
        ("确认", MetaCommand.YES), ("是", MetaCommand.YES), ("是的", MetaCommand.YES), ("no", MetaCommand.NO),
        ("取消", MetaCommand.NO), ("不", MetaCommand.NO), ("Don’t", MetaCommand.NO), ("slower", MetaCommand.SLOWER),
        ("慢一点", MetaCommand.SLOWER), ("慢一点吧", MetaCommand.SLOWER), ("faster please", MetaCommand.FASTER),
        ("快一点", MetaCommand.FASTER), ("help", MetaCommand.HELP), ("帮助", MetaCommand.HELP),
        ("ＳＴＯＰ", MetaCommand.STOP),
    ],
)
def test_meta_commands_in_both_languages(utterance, command):
    assert parse_meta(utterance) is command


@pytest.mark.parametrize("utterance", ["stop the alarm at seven", "send yes to Anna", "打开设置", "", "   ",
                                       "repeat my last order from the shop", "不要忘记给妈妈打电话"])
def test_requests_are_not_meta_commands(utterance):
    assert parse_meta(utterance) is None


def _request(payee=None) -> ConfirmationRequest:
    pay = button("Pay ¥25.00")
    payee = payee or el("Coffee House", (40, 200, 1040, 300), rid="com.example.app:id/merchant_name")
    obs = screen(payee, heading("Total ¥25.00", 400), pay)
    decision = SafetyGate().check(tap(pay), obs, GateContext(allowed_apps=frozenset({"com.example.app"})))
    return build_request(tap(pay), decision, obs, app="Shop")


def test_the_request_reads_back_what_whom_how_much_and_app_in_both_languages():
    req = _request()
    en, zh = req.spoken("en"), req.spoken("zh")
    assert "payment" in en and "¥25.00" in en and "Shop" in en and "Coffee House" in en and "yes, no" in en
    assert "付款" in zh and "¥25.00" in zh and "「Shop」" in zh and "Coffee House" in zh and "确认" in zh
    # A heading is not a payee: with no field that holds one, it says it cannot tell rather than guess.
    unsure = _request(heading("Coffee House"))
    assert "Coffee House" not in unsure.spoken("en") and "I can't tell who will receive the money" in unsure.spoken("en")
    assert "我看不出钱会付给谁" in unsure.spoken("zh")


def test_confirmation_flow_reminds_repeats_and_treats_silence_as_no():
    req = _request()
    moments = list(confirmation_flow(req, ScriptedConfirmer([None, ConfirmAnswer.REPEAT, ConfirmAnswer.YES]), Patience()))
    assert [m.final for m in moments] == [None, None, ConfirmAnswer.YES]
    assert "still waiting" in moments[0].say.en and moments[1].say == req.text
    silent = list(confirmation_flow(req, FixedConfirmer(None), Patience(window_s=30, reminders=2)))
    assert len([m for m in silent if m.final is None]) == 2
    assert silent[-1].final is ConfirmAnswer.NO and silent[-1].by_default
    stopped = list(confirmation_flow(req, FixedConfirmer(ConfirmAnswer.YES), Patience(), stopped=lambda: True))
    assert stopped[-1].final is ConfirmAnswer.NO


def test_typed_text_is_read_back_before_sending():
    field = el("Message", (40, 2000, 800, 2150), focused=True)
    send = button("Send", 2200)
    obs = screen(el("Anna", (40, 150, 600, 250), rid="com.chat:id/chat_title"), field, send)
    decision = SafetyGate().check(tap(send), obs, GateContext(allowed_apps=frozenset({"com.example.app"})))
    req = build_request(tap(send), decision, obs, app="Chat", typed="See you at 5")
    assert "See you at 5" in req.spoken("en") and "Anna" in req.spoken("en")
