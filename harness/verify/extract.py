"""Normalising what a request says into check parameters: clock times, dates, numbers, percentages.

    parse_clock("4:10 pm") == "16:10";  parse_clock("下午4点10分") == "16:10";  parse_clock("7 am") == "07:00"
    parse_date("April 11", year=2026) == "2026-04-11";  parse_date("4月11日", year=2026) == "2026-04-11"

Each returns None for text it cannot read (the check then says which parameter is missing).
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
MONTHS.update({k[:3]: v for k, v in list(MONTHS.items())})
ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

_EN_CLOCK = re.compile(r"(?<!\d)(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s*m\b\.?|(?<!\d)(\d{1,2}):(\d{2})(?!\d)", re.I)
_ZH_CLOCK = re.compile(r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?\s*(\d{1,2})\s*(?:[:：](\d{2})|点(?:\s*(\d{1,2})\s*分?|半)?)")


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
    """The first clock time in `text` as "HH:MM" (24 h), in English or Chinese; None if there is none."""
    if not text:
        return None
    zh = _ZH_CLOCK.search(_zh_number(text))
    if zh and (zh.group(1) or "点" in zh.group(0) or "：" in zh.group(0)):
        hour = int(zh.group(2))
        minute = int(zh.group(3) or zh.group(4) or (30 if zh.group(0).endswith("半") else 0))
        part = zh.group(1) or ""
        if part in ("下午", "傍晚", "晚上") and hour < 12 or part == "中午" and hour < 11:
            hour += 12
        elif part in ("凌晨", "早上", "早晨", "上午") and hour == 12:
            hour = 0
        return _ok(hour, minute)
    m = _EN_CLOCK.search(text)
    if m is None:
        return None
    if m.group(3):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group(3).lower() == "p" else 0)
        return _ok(hour, minute)
    return _ok(int(m.group(4)), int(m.group(5)))


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
