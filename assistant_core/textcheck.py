"""What the gate checks in text: secrets (a card number, a one-time code) in what would be typed or sent,
and invisible characters in what a question shows or says. Split out of `assistant_core.safety` (issue 26)
so that `toolgate`, `confirm` and `harness.tools` can use the same checks without importing the gate;
`assistant_core.safety` re-exports every name here.
"""

from __future__ import annotations

import re

from assistant_core.gatewords import (
    _CARD_RE,
    _CODE_WORDS_RE,
    _DIGITS_RUN_RE,
    _SECRET_FIELD_RE,
    context_labels,
)
from assistant_core.types import Observation


def _looks_secret(text: str, observation: Observation) -> bool:
    """Typed text that is a code or card number on a screen asking for one, or that carries a card
    number anywhere (a message ending in one)."""
    compact = text.strip()
    if has_card_number(compact):
        return True
    if _DIGITS_RUN_RE.fullmatch(compact):
        screen = "\n".join(context_labels(observation))
        return bool(_SECRET_FIELD_RE.search(screen))
    return False


def _contains_secret(text: str, observation: Observation) -> bool:
    """A spoken message that carries a code: digits next to code words, in the message or on screen."""
    if not _DIGITS_RUN_RE.search(text):
        return False
    if _CODE_WORDS_RE.search(text):
        return True
    # The model may quote a code without naming it; the screen (an SMS "your code is 123456") names it.
    codes = set(_DIGITS_RUN_RE.findall(text))
    for line in observation.screen_text.splitlines():
        if _CODE_WORDS_RE.search(line) and codes & set(_DIGITS_RUN_RE.findall(line)):
            return True
    return False


def has_card_number(text: str) -> bool:
    """Whether the text holds a payment card number (13-19 digits, spaces or dashes allowed, Luhn-valid)."""
    return any(_luhn(re.sub(r"\D", "", m.group(0))) for m in _CARD_RE.finditer(text))


def text_secret(text: str, observation: Observation) -> bool:
    """Text the assistant would send or type that carries a secret: a card number anywhere, or a code
    (digits next to code words, or a code the screen shows). The same check for typed and tool text."""
    return has_card_number(text) or _contains_secret(text, observation)


# Bidi controls (LRE RLE PDF LRO RLO U+202A-202E, LRI RLI FSI PDI U+2066-2069, LRM RLM, ALM U+061C) and
# invisible characters (zero-width space/joiners, word joiner and invisible operators, BOM, soft hyphen,
# Mongolian vowel separator, Hangul fillers): they can reorder or hide what a question shows.
_INVISIBLE_RE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060-\u2064"
                           "\ufeff\u00ad\u180e\u3164\uffa0\u115f\u1160\u034f]")


def visible_text(text: str) -> str:
    """`text` without bidi controls and invisible characters (everything shown or spoken in a question)."""
    return _INVISIBLE_RE.sub("", text)


def screen_codes(observation: Observation) -> set[str]:
    """One-time codes visible on screen: digit runs on a line that names a code or password (an SMS
    "Your verification code is 552781"). The loop scrubs them from everything it shows or stores."""
    codes: set[str] = set()
    for line in observation.screen_text.splitlines():
        if _CODE_WORDS_RE.search(line):
            codes.update(_DIGITS_RUN_RE.findall(line))
    return codes


def _luhn(digits: str) -> bool:
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0
