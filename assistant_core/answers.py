"""A spoken answer to the confirmation dialog: yes, no, repeat, or stop the whole run.

`classify_answer(utterance)` reads a whole utterance the way a person means it:
1. a phrase from the tables below, said on its own ("yes please", "go ahead", "好的，确认", "算了"), is that
   answer (after dropping punctuation, politeness and filler);
2. otherwise a negation anywhere wins: "don't go ahead", "yes, but not now", "先别发" are no (a no that
   is not meant only costs asking again; a yes that is not meant can send money);
3. otherwise a yes word with nothing against it is yes ("yes, send it to Sophie");
4. anything else (no yes or no word, "maybe", a request) is UNCLEAR: the dialog asks again, with the same
   words as the question ("Say yes, no, or repeat." / "请说“确认”、“取消”或“再说一遍”。").
A spoken "stop" (assistant_core.session's meta-command) stops the whole run, as Escape does.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from assistant_core import languages
from assistant_core.session import MetaCommand, parse_meta
from assistant_core.types import ConfirmAnswer


class Heard(StrEnum):
    YES = "yes"
    NO = "no"
    REPEAT = "repeat"
    STOP = "stop"
    UNCLEAR = "unclear"


# Whole answers (after normalising). At least 40 per language each side is asserted by the tests.
YES_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "yes", "yes please", "yes go ahead", "go ahead", "yes do it", "do it", "yeah", "yep", "yup", "sure",
        "sure go ahead", "ok", "okay", "ok go ahead", "okay do it", "alright", "all right", "fine", "confirm",
        "confirmed", "i confirm", "yes confirm", "correct", "that's right", "that is right", "right",
        "go on", "proceed", "please proceed", "please do", "please go ahead", "send it", "call", "call them",
        "pay", "yes pay", "approve", "approved", "affirmative", "absolutely", "of course", "definitely",
        "yes that's fine", "no problem", "sounds good", "let's do it", "i agree", "agreed", "do that",
        "yes i'm sure", "i'm sure", "yes sure",
    ),
    "zh": (
        "是", "是的", "对", "对的", "好", "好的", "好啊", "行", "可以", "可以的", "确认", "确定", "好的确认",
        "确认执行", "执行", "继续", "继续吧", "同意", "我同意", "没问题", "当然", "当然可以", "好嘞", "好滴",
        "是的确认", "对确认", "好的继续", "去吧", "做吧", "就这样", "就这么办", "发吧", "发送", "打吧", "拨打",
        "付吧", "付款", "支付", "确认付款", "确认发送", "是的没错", "没错", "对的没错", "好的可以", "行啊",
        "可以执行", "照做", "同意执行", "要", "要的",
    ),
}
NO_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "no", "nope", "nah", "no thanks", "no thank you", "don't", "do not", "don't do it", "do not do it",
        "don't go ahead", "cancel", "cancel it", "cancel that", "no cancel", "no wait", "wait", "wait a moment",
        "hold on", "not now", "not yet", "never", "never mind", "forget it", "no way", "no don't",
        "i don't want that", "i don't want to", "no i don't", "don't send it", "don't call", "don't pay",
        "decline", "declined", "refuse", "reject", "no no", "absolutely not", "definitely not",
        "certainly not", "not that", "that's wrong", "wrong", "i said no", "negative", "not ok", "no no no",
    ),
    "zh": (
        "不", "不是", "不要", "不行", "不用", "不用了", "不可以", "不对", "不同意", "不确认", "否", "取消",
        "取消吧", "算了", "算了吧", "先别", "先别发", "别", "别发", "别打", "别付", "别了", "不了", "先等等", "等等",
        "等一下", "等会儿", "拒绝", "我拒绝", "不要了", "不要发", "不要付款", "不付", "不发", "不打", "没有",
        "错了", "不对不对", "不不", "不用谢谢", "还是算了", "先不要", "先不", "暂时不要", "不执行", "别执行",
        "不好", "不想", "我不要",
    ),
}
REPEAT_PHRASES: dict[str, tuple[str, ...]] = {
    "en": ("repeat", "say that again", "say it again", "again", "what", "pardon", "sorry", "come again",
           "what did you say", "repeat please", "one more time", "i didn't hear", "i did not catch that"),
    "zh": ("再说一遍", "重复", "再说一次", "什么", "你说什么", "再读一遍", "没听清", "没听清楚", "再来一遍", "请再说一遍"),
}

# A negation anywhere in the utterance (rule 2).
_NEGATION_EN = re.compile(
    r"\b(?:no|not|don't|dont|do not|doesn't|never|nope|nah|cancel|stop|wait|hold on|abort|refuse|decline|reject|"
    r"forget it|never mind|wrong)\b")
_NEGATION_ZH = re.compile(r"不|别|没|否|取消|算了|停|等等|等一下|拒绝|错")
# A yes word (rule 3).
_YES_EN = re.compile(r"\b(?:yes|yeah|yep|yup|sure|ok|okay|confirm|go ahead|do it|proceed|correct|approve)\b")
_YES_ZH = re.compile(r"^(?:是的|是|对|好的|好|行|可以|确认|确定|继续|同意|没错)")  # said first: "好的，发吧"
# A question back ("what is it?", "是什么？") is not an answer.
_QUESTION = re.compile(r"\?|？|^(?:what|why|who|how|which|is it|are you)\b|什么|吗$|谁|为什么|怎么|哪")

_FILLER_EN = re.compile(r"\b(?:please|um+|uh+|er+|well|oh|so|then|just|now|thanks|thank you)\b")
_FILLER_ZH = re.compile(r"请|吧|呀|啊|呢|嘛|哦|噢|喔|吗|那|就|一下")

_LOOKUP: dict[str, Heard] = {}
for _table, _heard in ((REPEAT_PHRASES, Heard.REPEAT), (NO_PHRASES, Heard.NO), (YES_PHRASES, Heard.YES)):
    for _phrases in _table.values():
        for _p in _phrases:
            _LOOKUP.setdefault(_p, _heard)


def _normalise(utterance: str) -> str:
    text = unicodedata.normalize("NFKC", utterance).casefold().replace("’", "'")
    text = re.sub(r"[\s.,!?;:，。！？；：、…“”\"~～()（）-]+", " ", text)
    return " ".join(text.split())


_REGISTERED: tuple[object, dict[str, Heard]] = (None, {})


def _lookup() -> dict[str, Heard]:
    """The tables above, then each registered language's own whole answers (assistant_core.languages:
    `yes_words`, `no_words`, `repeat_words`; a language without rules of its own here is read by them alone)."""
    global _REGISTERED
    known = languages.registry()
    if _REGISTERED[0] is not known:
        table = dict(_LOOKUP)
        for lang in known.values():
            for words, heard in ((lang.repeat_words, Heard.REPEAT), (lang.no_words, Heard.NO), (lang.yes_words, Heard.YES)):
                for word in words:
                    table.setdefault(_normalise(word), heard)
        _REGISTERED = (known, table)
    return _REGISTERED[1]


def _squeeze(text: str) -> str:
    """Without filler words (and, for Chinese, without spaces)."""
    text = _FILLER_EN.sub(" ", text)
    if re.search(r"[\u4e00-\u9fff]", text):
        text = _FILLER_ZH.sub("", text.replace(" ", ""))
    return " ".join(text.split())


def classify_answer(utterance: str) -> Heard:
    """What a spoken reply to the confirmation means (see the module docstring)."""
    if not utterance or not utterance.strip():
        return Heard.UNCLEAR
    meta = parse_meta(utterance)
    if meta is MetaCommand.STOP:
        return Heard.STOP
    text = _normalise(utterance)
    lookup = _lookup()
    for candidate in (text, _squeeze(text)):
        if candidate in lookup:
            return lookup[candidate]
    if meta is MetaCommand.REPEAT:
        return Heard.REPEAT
    if _NEGATION_EN.search(text) or _NEGATION_ZH.search(text):
        return Heard.NO
    if _QUESTION.search(unicodedata.normalize("NFKC", utterance).casefold().strip()):
        return Heard.UNCLEAR
    squeezed = _squeeze(text)
    if _YES_EN.search(text) or _YES_ZH.search(squeezed):
        return Heard.YES
    return Heard.UNCLEAR


_AS_CONFIRM = {Heard.YES: ConfirmAnswer.YES, Heard.NO: ConfirmAnswer.NO, Heard.STOP: ConfirmAnswer.NO,
               Heard.REPEAT: ConfirmAnswer.REPEAT}


def parse_answer(utterance: str, lang: str = "en") -> ConfirmAnswer | None:
    """YES, NO or REPEAT for a spoken answer (a spoken stop is a no here; the window also stops the run);
    None when it is not clear (ask again)."""
    return _AS_CONFIRM.get(classify_answer(utterance))
