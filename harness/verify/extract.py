"""Normalising what a request says into check parameters: clock times, dates, numbers, percentages;
and comparing a message's gist when the request gave its words loosely.

    parse_clock("4:10 pm") == "16:10";  parse_clock("下午4点10分") == "16:10";  parse_clock("7 am") == "07:00"
    parse_clock("half past six") == "06:30";  parse_clock("6点半") == "06:30";  parse_clock("at 7 tonight") == "19:00"
    parse_date("April 11", year=2026) == "2026-04-11";  parse_date("4月11日", year=2026) == "2026-04-11"
    same_gist("I am late", "I'm running late") is True;  same_gist("dinner is at 7", "Dinner is at 8") is False

Each parser returns None for text it cannot read (the check then says which parameter is missing).
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
MONTHS.update({k[:3]: v for k, v in list(MONTHS.items())})
ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

HOUR_WORDS = {w: i for i, w in enumerate(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"), start=1)}
_MINUTE_WORDS = {"o five": 5, "oh five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "twenty five": 25, "thirty": 30,
                 "thirty five": 35, "forty": 40, "forty five": 45, "fifty": 50, "fifty five": 55}
_HOUR_WORD = re.compile(r"\b(" + "|".join(HOUR_WORDS) + r")\b")
# "six thirty", "seven-fifteen": an hour word and a minute word
_HOUR_MINUTE_WORDS = re.compile(_HOUR_WORD.pattern + r"[ -](" + "|".join(
    sorted((m.replace(" ", "[ -]") for m in _MINUTE_WORDS), key=len, reverse=True)) + r")\b")
_ZH_CLOCK = re.compile(
    r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?\s*(\d{1,2})\s*(?:[:：](\d{2})|点(?:\s*(\d{1,2})\s*(分|刻)?|半)?)")
_AMPM = r"(?:\s*(?P<ampm>[ap])\.?\s*m\b\.?)"
# Forms of an English clock time (on lower-cased text whose hour words are already digits), earliest wins:
_EN_FORMS = (
    # "half past 6", "quarter to 8", "10 past 7", "20 minutes to 9"
    re.compile(r"\b(?:(?P<half>half)|(?P<quarter>(?:a )?quarter)|(?P<n>\d{1,2})(?: minutes?)?)\s+(?P<rel>past|after|to|before)\s+"
               r"(?P<h>\d{1,2})(?![\d:])(?!\s*(?:hours?|minutes?|mins?|days?|weeks?|people|times|percent)\b)"
               r"(?:\s*o'?clock)?" + _AMPM + "?"),
    # "7 am", "4:10 pm", "6.30 p.m.", "7 o'clock", "7 o'clock pm"
    re.compile(r"(?<![\d:.])(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?(?=\s*(?:[ap]\.?\s*m\b|o'?clock\b))(?:\s*o'?clock\b)?"
               + _AMPM + "?"),
    # "14:00", "6:30"
    re.compile(r"(?<![\d:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])"),
    # "at 7" / "for 7" where the hour ends the phrase ("at 7.", "at 7 tomorrow", "at 7 in the evening")
    re.compile(r"\b(?:at|for|by|around|about)\s+(?P<h>\d{1,2})(?![\d:]|\.\d)"
               r"(?=\s*(?:$|[,.;!?)]|tomorrow\b|today\b|tonight\b|this\b|in the\b|at night\b|and\b))"),
)
_PART_AFTER = re.compile(r"\s*(?:in the|this|tomorrow|at)\s+(morning|afternoon|evening|night)\b|\s*(tonight)\b")
_PART_BEFORE = re.compile(r"\b(morning|afternoon|evening|tonight|night)\s*,?\s*(?:at|around|about|by)?\s*$")


def _zh_number(text: str) -> str:
    """Chinese numerals up to 99 as digits ("十二" → "12", "八" → "8") inside a string."""
    def conv(m: re.Match) -> str:
        s = m.group(0)
        if "十" in s:
            tens, _, units = s.partition("十")
            return str((ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (ZH_DIGITS.get(units, 0) if units else 0))
        return "".join(str(ZH_DIGITS[c]) for c in s)

    return re.sub(r"[零一二两三四五六七八九十]+", conv, text)


def parse_clock(text: str) -> str | None:
    """The first clock time in `text` as "HH:MM" (24 h), in English or Chinese; None if there is none.
    English: "7 am", "4:10 pm", "14:00", "half past six", "quarter to 8", "seven o'clock", "six thirty",
    "noon", "at 7 tomorrow", "at 7 in the evening" (a part of the day next to the hour sets am/pm); a text
    that is only an hour ("7", "at 7") is that hour. Chinese: "下午4点10分", "6点半", "七点一刻", "晚上7:30"."""
    if not text:
        return None
    zh = _ZH_CLOCK.search(_zh_number(text))
    if zh and (zh.group(1) or "点" in zh.group(0) or "：" in zh.group(0)):
        hour = int(zh.group(2))
        if zh.group(0).endswith("半"):
            minute = 30
        elif zh.group(5) == "刻":
            minute = 15 * int(zh.group(4))
        else:
            minute = int(zh.group(3) or zh.group(4) or 0)
        part = zh.group(1) or ""
        if part in ("下午", "傍晚", "晚上") and hour < 12 or part == "中午" and hour < 11:
            hour += 12
        elif part in ("凌晨", "早上", "早晨", "上午") and hour == 12:
            hour = 0
        return _ok(hour, minute)
    return _en_clock(text)


def _folded(text: str) -> str:
    """Lower-cased, one space between words, typographic apostrophes made plain."""
    return " ".join((text or "").casefold().replace("\u2019", "'").split())


def _hour_words_as_digits(text: str) -> str:
    return _HOUR_WORD.sub(lambda m: str(HOUR_WORDS[m.group(1)]), text)


def _en_clock(text: str) -> str | None:
    t = _folded(text)
    t = re.sub(r"\bnoon\b|\bmidday\b", "12:00", t)
    t = re.sub(r"\bmidnight\b", "0:00", t)
    t = _HOUR_MINUTE_WORDS.sub(
        lambda m: f"{HOUR_WORDS[m.group(1)]}:{_MINUTE_WORDS[re.sub('[ -]', ' ', m.group(2))]:02d}", t)
    t = _hour_words_as_digits(t)
    bare = re.fullmatch(r"\s*(?:at\s+|for\s+)?(\d{1,2})(?:[:.](\d{2}))?\s*[.!]?\s*", t)
    if bare:  # only a time, as a pattern captured it: "7", "at 7", "6.30"
        return _ok(int(bare.group(1)), int(bare.group(2) or 0))
    found = [m for m in (rx.search(t) for rx in _EN_FORMS) if m]
    if not found:
        return None
    m = min(found, key=lambda x: (x.start(), -len(x.group(0))))
    g = m.groupdict()
    hour = int(g["h"])
    if g.get("rel"):
        minute = 30 if g["half"] else 15 if g["quarter"] else int(g["n"])
        if g["rel"] in ("to", "before"):
            hour, minute = (hour - 1) % 24, 60 - minute
        if not 0 < minute < 60:
            return None
    else:
        minute = int(g.get("m") or 0)
    ampm = g.get("ampm")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        return _ok(hour % 12 + (12 if ampm == "p" else 0), minute)
    after = _PART_AFTER.match(t, m.end())
    before = _PART_BEFORE.search(t[:m.start()])
    part = (after.group(1) or after.group(2)) if after else before.group(1) if before else ""
    if part == "morning" and hour == 12 or part in ("night", "tonight") and hour == 12:
        hour = 0
    elif part in ("afternoon", "evening", "night", "tonight") and 1 <= hour < 12:
        hour += 12
    return _ok(hour, minute)


def _ok(hour: int, minute: int) -> str | None:
    return f"{hour:02d}:{minute:02d}" if 0 <= hour < 24 and 0 <= minute < 60 else None


_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_EN_DATE = re.compile(r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I)
_EN_DATE2 = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b", re.I)
_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")


def parse_date(text: str, *, today: dt.date) -> str | None:
    """The first calendar date in `text` as "YYYY-MM-DD"; the year defaults to `today`'s. Also
    today/tomorrow/今天/明天/后天."""
    if not text:
        return None
    for rx, order in ((_ISO, "ymd"), (_ZH_DATE, "ymd"), (_EN_DATE, "md"), (_EN_DATE2, "dm")):
        m = rx.search(_zh_number(text) if rx is _ZH_DATE else text)
        if m is None:
            continue
        try:
            if order == "ymd":
                y, mo, d = int(m.group(1) or today.year), int(m.group(2)), int(m.group(3))
            elif order == "md":
                y, mo, d = today.year, MONTHS[m.group(1).lower()[:3]], int(m.group(2))
            else:
                y, mo, d = today.year, MONTHS[m.group(2).lower()[:3]], int(m.group(1))
            return dt.date(y, mo, d).isoformat()
        except (ValueError, KeyError):
            continue  # "April 31": not a date; try the next form
    lowered = text.lower()
    for words, days in ((("day after tomorrow", "后天"), 2), (("tomorrow", "明天"), 1), (("today", "今天"), 0)):
        if any(w in lowered for w in words):
            return (today + dt.timedelta(days=days)).isoformat()
    return None


def parse_percent(text: str) -> int | None:
    m = re.search(r"(\d{1,3})\s*(?:%|％|percent|per cent)", text or "")
    if m is None:
        m = re.search(r"百分之\s*(\d{1,3})", _zh_number(text or ""))
    if m is None:
        return None
    value = int(m.group(1))
    return value if 0 <= value <= 100 else None


def parse_minutes(text: str) -> int | None:
    m = re.search(r"(\d{1,3})\s*(?:-\s*)?(?:minutes?|mins?|分钟)", _zh_number(text or ""), re.I)
    if m:
        return int(m.group(1))
    m = re.search(r"(\d{1,2})\s*(?:-\s*)?(?:hours?|小时)", _zh_number(text or ""), re.I)
    return int(m.group(1)) * 60 if m else None


def looks_like_number(text: str) -> bool:
    return sum(c.isdigit() for c in text or "") >= 5


# --- the gist of a message ---------------------------------------------------------------------------------
#
# A request that gives a message's words without quotes ("Text Mum that I am late") gives its gist, not
# its wording: the agent may send "I'm running late". `same_gist` says whether a sent body still carries
# the request's content. English words are lower-cased, contractions expanded ("I'm" -> "i am", "can't" ->
# "can not"), hour words made digits ("six" -> "6"), a few suffixes cut ("arrived" ~ "arrive"), and the
# stop words below dropped; Chinese is compared character by character without the particles and
# pronouns below. Numbers and negation are facts, not wording, so they must agree exactly.

_CONTRACTIONS = ((r"\bwon't\b", "will not"), (r"\bcan't\b", "can not"), (r"\bcannot\b", "can not"), (r"n't\b", " not"),
                 (r"'m\b", " am"), (r"'re\b", " are"), (r"'ll\b", " will"), (r"'ve\b", " have"), (r"'d\b", " would"),
                 (r"'s\b", ""))
_EN_STOP = frozenset((
    "a", "an", "the", "i", "me", "my", "mine", "myself", "we", "us", "our", "you", "your", "he", "him", "his",
    "she", "her", "it", "its", "they", "them", "their", "am", "is", "are", "was", "were", "be", "been", "being",
    "will", "would", "shall", "should", "can", "could", "may", "might", "must", "do", "does", "did", "have",
    "has", "had", "get", "got", "to", "of", "at", "in", "on", "for", "with", "and", "or", "but", "so", "just",
    "really", "very", "quite", "bit", "little", "that", "this", "there", "here", "oh", "ok", "okay", "please",
    "hey", "hi", "hello", "dear", "well", "going", "gonna", "now", "then"
))
_NEGATIONS = frozenset(("not", "no", "never", "nothing", "nobody", "none", "neither", "nor"))
_ZH_STOP = frozenset("我你您他她它们的了会要就吧呢啊哦呀嘛啦是在一个下很都也还和跟说着过得地吗哈嗯")
_ZH_NEGATIONS = frozenset("不没别未无甭")
_CJK = r"[\u3400-\u9fff]"
# Request content words a sent body must carry. Two thirds lets one content word in three be reworded
# ("be late" -> "running late", "home" -> "back home") while a body that shares only a word or two with
# a longer request stays below it; requests of one or two content words must be carried whole.
GIST_SHARE = 2 / 3


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _gist(text: str) -> tuple[set[str], set[str], bool]:
    """(content tokens, numbers, negated) of a message."""
    t = _folded(text)
    for pattern, repl in _CONTRACTIONS:
        t = re.sub(pattern, repl, t)
    t = _hour_words_as_digits(t)
    # Chinese numerals become digits, except a lone 一 ("晚一点到": a little, not one o'clock)
    t = re.sub(r"[零一二两三四五六七八九十]{2,}|[零二两三四五六七八九十]", lambda m: _zh_number(m.group(0)), t)
    content: set[str] = set()
    numbers: set[str] = set()
    negated = False
    for token in re.findall(r"[a-z]+|\d+|" + _CJK, t):
        if token.isdigit():
            if token.strip("0"):  # "7:00" is 7; its zeros say nothing
                numbers.add(token.lstrip("0"))
                content.add(token.lstrip("0"))
        elif re.fullmatch(_CJK, token):
            negated |= token in _ZH_NEGATIONS
            if token not in _ZH_STOP:
                content.add(token)
        else:
            negated |= token in _NEGATIONS
            if token not in _EN_STOP:
                content.add(_stem(token))
    return content, numbers, negated


def gist_share(wanted: str, body: str) -> float:
    """How much of `wanted`'s content `body` carries, 0..1; 0 when their numbers or negation differ."""
    want, want_numbers, want_neg = _gist(wanted)
    have, have_numbers, have_neg = _gist(body)
    if want_numbers != have_numbers or want_neg != have_neg:
        return 0.0
    if not want:  # only stop words ("OK"): then the words themselves must all be there
        want = set(re.findall(r"[a-z]+|" + _CJK, (wanted or "").casefold()))
        have = set(re.findall(r"[a-z]+|" + _CJK, (body or "").casefold()))
        if not want:
            return 0.0
    return len(want & have) / len(want)


def same_gist(wanted: str, body: str) -> bool:
    """Whether a sent `body` says what a loosely given request text `wanted` says (see GIST_SHARE)."""
    return gist_share(wanted, body) >= GIST_SHARE - 1e-9
