"""Meta-commands: what the user says is checked for them before anything reaches the model.

`parse_meta(utterance)` recognises a whole utterance that is a command: stop/停止, repeat/再说一遍,
yes/no/确认/取消/是/不, slower/faster/慢一点/快一点, help/帮助 (with common variants and politeness words
such as "please"/"请"/"吧"). A sentence that merely contains the word ("stop the alarm at seven") is a
request for the model, not a command. `_PHRASES[MetaCommand.STOP]` is the product's one list of spoken
stop words per language: the assistant (phonebuddy/assistant.py: the one router of what was heard or
typed), the confirmation answers (assistant_core/answers.py), the wizard and the command line all decide
"stop" with `parse_meta`.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum

from assistant_core.i18n import Catalog


class MetaCommand(StrEnum):
    STOP = "stop"
    REPEAT = "repeat"
    YES = "yes"
    NO = "no"
    SLOWER = "slower"
    FASTER = "faster"
    HELP = "help"


_PHRASES: dict[MetaCommand, tuple[str, ...]] = {
    MetaCommand.STOP: ("stop", "stop it", "stop now", "stop that", "halt", "abort", "cancel everything",
                       "停止", "停", "停下", "停下来", "别动", "暂停", "停一下", "不要动", "终止"),
    MetaCommand.REPEAT: ("repeat", "repeat that", "say again", "say that again", "again", "pardon",
                         "what did you say", "再说一遍", "重复", "再说一次", "重复一遍", "你说什么", "没听清"),
    MetaCommand.YES: ("yes", "yeah", "yep", "ok", "okay", "sure", "confirm", "go ahead", "do it", "yes do it",
                      "确认", "是", "是的", "好", "好的", "可以", "对", "行", "确定", "同意", "继续"),
    MetaCommand.NO: ("no", "nope", "cancel", "don't", "do not", "no thanks", "don't do it", "not now",
                     "取消", "不", "不要", "不是", "不行", "别", "否", "算了", "不用了", "拒绝"),
    MetaCommand.SLOWER: ("slower", "slow down", "speak slower", "more slowly", "慢一点", "慢点", "说慢点",
                         "慢一些", "说慢一点"),
    MetaCommand.FASTER: ("faster", "speed up", "speak faster", "quicker", "快一点", "快点", "说快点",
                         "快一些", "说快一点"),
    MetaCommand.HELP: ("help", "what can i say", "what can you do", "帮助", "帮忙", "怎么用", "我能说什么"),
}
_POLITE_RE = re.compile(r"^(?:please|ok|okay|hey|phonebuddy|请|麻烦)\s*|\s*(?:please|now|thanks|thank you|吧|了|啊|呀|一下)$",
                        re.IGNORECASE)
_LOOKUP: dict[str, MetaCommand] = {p: cmd for cmd, phrases in _PHRASES.items() for p in phrases}

MSG = Catalog(
    "session",
    {
        "stopped": "Stopped.",
        "nothing_to_stop": "Nothing is running.",
        "nothing_to_repeat": "I haven't said anything yet.",
        "no_question": "There is nothing to answer right now.",
        "slower": "Speaking slower.",
        "faster": "Speaking faster.",
        "rate_limit": "That is already the limit.",
        "help": ("Tell me what to do on your phone, for example: send a message to Anna. While I work you can say "
            "stop, repeat, slower or faster. When I ask before something important, say yes, no, or repeat."),
    },
)


def normalize_utterance(text: str) -> str:
    """Lower-case, full-width to half-width, punctuation and surrounding politeness words removed."""
    text = unicodedata.normalize("NFKC", text).casefold().strip().replace("’", "'").replace("‘", "'")
    text = re.sub(r"[\s\.,!?;:，。！？；：、…“”\"~～]+", " ", text).strip()
    previous = None
    while previous != text:
        previous = text
        text = _POLITE_RE.sub("", text).strip()
    return text


def parse_meta(utterance: str) -> MetaCommand | None:
    """The meta-command this whole utterance is, or None if it is a request for the model."""
    if not utterance or not utterance.strip():
        return None
    raw = unicodedata.normalize("NFKC", utterance).casefold().strip().replace("’", "'")
    raw = re.sub(r"[\s\.,!?;:，。！？；：、…“”\"~～]+", " ", raw).strip()
    if raw in _LOOKUP:
        return _LOOKUP[raw]
    return _LOOKUP.get(normalize_utterance(utterance))
