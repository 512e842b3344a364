"""The text front end every voice hears: numbers, codes, money, percentages, times and dates written out
the way people say them, in English or Chinese, before any engine (piper, Kokoro, espeak-ng) sees the text.

Why: left to themselves the engines read "13800138000" as one big number (Kokoro), "150 7354 6246" as
"one hundred fifty, seven thousand..." (piper), and drop words they cannot read. Here:

- phone numbers, verification codes and card numbers are read digit by digit in groups ("138 0013 8000"
  -> "one three eight, zero zero one three, eight zero, zero zero" / "一三八，零零一三，八零，零零"; three
  or more equal digits are broken by a pause); a bare run of five or more digits, digits after a code word ("code", "PIN", "ending in", "验证码", "尾号"...),
  and space- or hyphen-separated digit groups of seven digits or more count as such;
- amounts as money ("$12.50" -> "twelve dollars and fifty cents", "¥12.50" -> "十二元五角");
- percentages ("45%" -> "forty-five percent" / "百分之四十五"), times ("7:30 pm" -> "seven thirty p m",
  "下午3:05" -> "下午三点零五分"), dates ("2025-03-14" -> "March fourteenth, twenty twenty-five" /
  "二零二五年三月十四日"; "3月14日" -> "三月十四日");
- other numbers as cardinals ("42" -> "forty-two" / "四十二", "2个" -> "两个", "3.5" -> "three point five");
- English words and app names inside Chinese sentences are kept as they are, and nothing else is dropped:
  only digits and the symbols around them (¥ $ % : - /) are rewritten.

`normalize(text, lang)` is what the TTS speak path calls (once per sentence, in `speech.tts.VoiceRouter`).
`spoken_digits(text)` goes the other way for checking what a recogniser heard: every digit written or
spoken ("one", "一", "幺", "两", "9") in order, so a read-back can be compared digit for digit.
`digits_in_transcript(text)` tidies a Chinese transcript: runs of four or more spoken digits ("一三八零…")
become Arabic digits and "9,5,5,8" becomes "9558".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant_core.i18n import Lang, normalize_lang

# ----- number words --------------------------------------------------------------------------------------------
EN_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_EN_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
             "nineteen")
_EN_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_EN_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_EN_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
               "nine": "ninth", "twelve": "twelfth"}
ZH_DIGITS = "零一二三四五六七八九"


def en_cardinal(n: int) -> str:
    """42 -> 'forty-two', 1234 -> 'one thousand two hundred thirty-four'."""
    if n < 0:
        return "minus " + en_cardinal(-n)
    if n < 10:
        return EN_DIGITS[n]
    if n < 20:
        return _EN_TEENS[n - 10]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _EN_TENS[tens] + (f"-{EN_DIGITS[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{EN_DIGITS[hundreds]} hundred" + (f" {en_cardinal(rest)}" if rest else "")
    for scale, name in _EN_SCALES:
        if n >= scale:
            high, rest = divmod(n, scale)
            return f"{en_cardinal(high)} {name}" + (f" {en_cardinal(rest)}" if rest else "")
    raise AssertionError(n)  # pragma: no cover


def en_ordinal(n: int) -> str:
    """14 -> 'fourteenth', 21 -> 'twenty-first'."""
    words = en_cardinal(n)
    head, sep, last = words.rpartition("-") if "-" in words.split()[-1] else words.rpartition(" ")
    if last in _EN_ORDINAL:
        last = _EN_ORDINAL[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return head + sep + last


def en_year(n: int) -> str:
    """2025 -> 'twenty twenty-five', 2005 -> 'two thousand five', 1900 -> 'nineteen hundred'."""
    if 2000 <= n <= 2009 or not 1100 <= n <= 2099:
        return en_cardinal(n)
    high, low = divmod(n, 100)
    if low == 0:
        return f"{en_cardinal(high)} hundred"
    return f"{en_cardinal(high)} " + (f"oh {EN_DIGITS[low]}" if low < 10 else en_cardinal(low))


def zh_cardinal(n: int) -> str:
    """42 -> '四十二', 105 -> '一百零五', 10010 -> '一万零一十', 12 -> '十二' (digit by digit from 10^12)."""
    if n < 0:
        return "负" + zh_cardinal(-n)
    if n == 0:
        return "零"
    if n >= 10**12:
        return digits_words(str(n), "zh")

    def below_10k(m: int, leading: bool) -> str:
        out, zero = "", False
        for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d, m = divmod(m, value)
            if d:
                if zero:
                    out += "零"
                    zero = False
                out += unit if (unit == "十" and d == 1 and leading and not out) else ZH_DIGITS[d] + unit
            elif out:
                zero = True
        return out

    out, gap = "", False
    for value, unit in ((10**8, "亿"), (10**4, "万"), (1, "")):
        chunk, n = divmod(n, value)
        if chunk:
            if out and (gap or chunk < 1000):
                out += "零"
            out += below_10k(chunk, leading=not out) + unit
            gap = False
        elif out:
            gap = True
    return out


def digits_words(digits: str, lang: Lang) -> str:
    """'4829' -> 'four eight two nine' / '四八二九'."""
    if lang == "zh":
        return "".join(ZH_DIGITS[int(d)] for d in digits)
    return " ".join(EN_DIGITS[int(d)] for d in digits)


def number_words(number: str, lang: Lang) -> str:
    """A written number ('1,234', '3.50', '-7') as words."""
    number = number.replace(",", "").replace("，", "")
    negative = number.startswith(("-", "−"))
    number = number.lstrip("-−+")
    whole, _, frac = number.partition(".")
    value = int(whole or "0")
    if lang == "zh":
        text = zh_cardinal(value) + ("点" + digits_words(frac, "zh") if frac else "")
        return ("负" + text) if negative else text
    text = en_cardinal(value) + (" point " + digits_words(frac, "en") if frac else "")
    return ("minus " + text) if negative else text


# ----- digit strings --------------------------------------------------------------------------------------------
def group_digits(digits: str) -> list[str]:
    """How a digit string is grouped when read out: 11 digits (a Chinese mobile) 3-4-4, 10 digits 3-3-4,
    6 digits 3-3, 7 digits 3-4, 8 digits 4-4, four or fewer in one group, otherwise groups of four."""
    n = len(digits)
    sizes = {11: (3, 4, 4), 10: (3, 3, 4), 9: (3, 3, 3), 8: (4, 4), 7: (3, 4), 6: (3, 3), 5: (5,)}.get(n)
    if n <= 4:
        sizes = (n,)
    if sizes is None:
        sizes = tuple([4] * (n // 4) + ([n % 4] if n % 4 else []))
    out, at = [], 0
    for size in sizes:
        out.append(digits[at : at + size])
        at += size
    return out


def _break_repeats(group: str) -> list[str]:
    """'8000' -> ['80', '00']: no more than two equal digits go by without a pause (listeners, and our own
    recogniser, miscount 'zero zero zero': Whisper base heard it as two or four zeros in our round trip).
    A run of three or more is cut into pairs from its end."""
    parts = [""]
    for run in (m[0] for m in re.finditer(r"(\d)\1*", group)):
        if len(run) < 3:
            parts[-1] += run
            continue
        head = len(run) % 2 or 2
        parts[-1] += run[:head]
        parts.extend(run[i : i + 2] for i in range(head, len(run), 2))
    return [p for p in parts if p]


def read_digit_groups(groups: list[str], lang: Lang, *, plus: bool = False) -> str:
    """Digit groups read digit by digit, with a pause (comma) between groups and inside a run of three or
    more equal digits."""
    sep = "，" if lang == "zh" else ", "
    spoken = sep.join(digits_words(part, lang) for g in groups if g for part in _break_repeats(g))
    if plus:
        spoken = ("加" if lang == "zh" else "plus ") + spoken
    return spoken


def read_digits(text: str, lang: Lang) -> str:
    """A written phone number, code or card number ('+86 138-0013-8000', '13800138000') digit by digit,
    keeping the writer's grouping when there is one."""
    plus = text.lstrip().startswith("+")
    groups = re.findall(r"\d+", text)
    if len(groups) == 1:
        groups = group_digits(groups[0])
    return read_digit_groups(groups, lang, plus=plus)


# ----- money ------------------------------------------------------------------------------------------------------
_CURRENCY_EN = {"$": ("dollar", "dollars", "cent", "cents"), "US$": ("dollar", "dollars", "cent", "cents"),
                "€": ("euro", "euros", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
                "¥": ("yuan", "yuan", "fen", "fen"), "￥": ("yuan", "yuan", "fen", "fen"),
                "RMB": ("yuan", "yuan", "fen", "fen"), "CNY": ("yuan", "yuan", "fen", "fen"),
                "USD": ("dollar", "dollars", "cent", "cents"), "EUR": ("euro", "euros", "cent", "cents")}
_CURRENCY_ZH = {"$": "美元", "US$": "美元", "USD": "美元", "€": "欧元", "EUR": "欧元", "£": "英镑",
                "¥": "元", "￥": "元", "RMB": "元", "CNY": "元"}


def money_words(amount: str, currency: str, lang: Lang) -> str:
    amount = amount.replace(",", "")
    whole, _, frac = amount.partition(".")
    value = int(whole or "0")
    cents = int((frac + "00")[:2]) if frac else 0
    if lang == "zh":
        unit = _CURRENCY_ZH.get(currency, "元")
        if unit == "元":
            text = zh_cardinal(value) + "元" if value or not cents else ""
            jiao, fen = divmod(cents, 10)
            if jiao:
                text += ZH_DIGITS[jiao] + "角"
            elif fen and value:
                text += "零"
            if fen:
                text += ZH_DIGITS[fen] + "分"
            return _liang(text)
        return _liang(number_words(amount, "zh")) + unit
    one, many, cent, cents_word = _CURRENCY_EN.get(currency, ("", "", "cent", "cents"))
    text = f"{en_cardinal(value)} {one if value == 1 else many}".strip()
    if cents:
        text += f" and {en_cardinal(cents)} {cent if cents == 1 else cents_word}"
    return text


def _liang(text: str) -> str:
    """二 before a measure word is said 两 ('二元' -> '两元', '二千' -> '两千'), except in 十二 or 二十."""
    if text.startswith("二") and len(text) > 1 and text[1] in "千万亿元百":
        return "两" + text[1:]
    return text


# ----- times and dates ------------------------------------------------------------------------------------------
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def time_words(hour: int, minute: int, suffix: str, lang: Lang) -> str:
    if lang == "zh":
        text = ("两" if hour == 2 else zh_cardinal(hour)) + "点"
        if minute == 30:
            text += "半"
        elif minute:
            text += ("零" if minute < 10 else "") + zh_cardinal(minute) + "分"
        prefix = {"am": "上午", "pm": "下午"}.get(suffix, "")
        return prefix + text
    text = en_cardinal(hour)
    if minute == 0:
        text += " o'clock" if not suffix else ""
    elif minute < 10:
        text += f" oh {EN_DIGITS[minute]}"
    else:
        text += " " + en_cardinal(minute)
    if suffix:
        text += " " + " ".join(suffix)  # 'p m': said letter by letter
    return text


def date_words(year: int | None, month: int, day: int, lang: Lang) -> str:
    if lang == "zh":
        head = digits_words(str(year), "zh") + "年" if year is not None else ""
        return f"{head}{zh_cardinal(month)}月{zh_cardinal(day)}日"
    text = f"{MONTHS[month - 1]} {en_ordinal(day)}"
    return text + (f", {en_year(year)}" if year is not None else "")


# ----- the rules --------------------------------------------------------------------------------------------------
CODE_WORDS_EN = (r"code|codes|pin|otp|password|passcode|ending in|ends in|ending with|extension|ext\.?|"
                 r"account|card|number|no\.|tracking|order|reference|ref")
CODE_WORDS_ZH = r"验证码|校验码|动态码|密码|口令|尾号|号码|手机号|电话|卡号|账号|帐号|编号|单号|订单号|分机|工号|取件码|房间号?"

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_AMPM = r"(?:\s*(?P<ampm>[ap])\.?\s?m(?:\.(?!\s*$))?(?![A-Za-z]))"
_ZH_MEASURE = "个次条张位件本只天岁项首台部页层号周倍遍分钟小时"

Rule = tuple[re.Pattern[str], Callable[[re.Match[str], Lang], str]]


def _date_iso(m: re.Match[str], lang: Lang) -> str:
    year, month, day = int(m["y"]), int(m["m"]), int(m["d"])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return read_digits(m[0], lang)
    return date_words(year, month, day, lang)


def _zh_date(m: re.Match[str], lang: Lang) -> str:
    out = ""
    if m["y"]:
        out += digits_words(m["y"], "zh") + "年" if lang == "zh" else ""
    month = int(m["m"])
    day = int(m["d"]) if m["d"] else None
    if lang != "zh":
        if 1 <= month <= 12 and day:
            return date_words(int(m["y"]) if m["y"] else None, month, day, "en")
        return m[0]
    out += zh_cardinal(month) + "月"
    if day is not None:
        out += zh_cardinal(day) + (m["dw"] or "日")
    return out


def _time(m: re.Match[str], lang: Lang) -> str:
    hour, minute = int(m["h"]), int(m["min"] or 0)
    if hour > 24 or minute > 59:
        return m[0]
    text = time_words(hour, minute, (m["ampm"] or "").lower() + ("m" if m["ampm"] else ""), lang)
    if m["sec"]:
        sec = int(m["sec"])
        text += (zh_cardinal(sec) + "秒") if lang == "zh" else f" and {en_cardinal(sec)} seconds"
    return text


def _money_prefix(m: re.Match[str], lang: Lang) -> str:
    return money_words(m["amt"], m["cur"].upper() if m["cur"].isalpha() else m["cur"], lang)


def _money_suffix(m: re.Match[str], lang: Lang) -> str:
    unit = m["unit"]
    cur = {"元": "¥", "块": "¥", "块钱": "¥", "人民币": "¥", "美元": "$", "dollars": "$", "dollar": "$",
           "yuan": "¥", "rmb": "¥", "euros": "€", "euro": "€"}.get(unit.lower(), "¥")
    if lang == "zh" and unit in ("块", "块钱"):
        return _liang(number_words(m["amt"], "zh")) + unit
    return money_words(m["amt"], cur, lang)


def _percent(m: re.Match[str], lang: Lang) -> str:
    if lang == "zh":
        return "百分之" + number_words(m["n"], "zh")
    return number_words(m["n"], "en") + " percent"


def _coded(m: re.Match[str], lang: Lang) -> str:
    return m["pre"] + read_digits(m["digits"], lang)


_COUNTED = re.compile(r"\s*(?:[人步个次米字名位件条张天年岁元块倍]|公里|千米|(?i:steps|people|words|meters|metres|times|km)\b)")


def _digit_string(m: re.Match[str], lang: Lang) -> str:
    """A bare run of five or more digits is a code or number to read digit by digit, unless it is a
    round number (20000) or counts something (12345步, 15000 steps): then it is said as a number."""
    raw = m[0]
    if not raw.startswith(("+", "0")) and len(raw) <= 9 and (raw.endswith("00") or _COUNTED.match(m.string, m.end())):
        return _liang(number_words(raw, lang)) if lang == "zh" else number_words(raw, lang)
    return read_digits(raw, lang)


def _digit_groups(m: re.Match[str], lang: Lang) -> str:
    """Grouped digits of seven or more in all are a phone or card number; fewer are left to later rules."""
    return read_digits(m[0], lang) if sum(c.isdigit() for c in m[0]) >= 7 else m[0]


def _ordinal_en(m: re.Match[str], lang: Lang) -> str:
    return en_ordinal(int(m["n"])) if lang == "en" else "第" + zh_cardinal(int(m["n"]))


def _year_en(m: re.Match[str], lang: Lang) -> str:
    return m["pre"] + (en_year(int(m["y"])) if lang == "en" else digits_words(m["y"], "zh"))


def _zh_year(m: re.Match[str], lang: Lang) -> str:
    return digits_words(m["y"], "zh") + "年"


def _zh_measure(m: re.Match[str], lang: Lang) -> str:
    words = number_words(m["n"], "zh")
    return ("两" if words == "二" else _liang(words)) + m["unit"]


def _plain_number(m: re.Match[str], lang: Lang) -> str:
    return _liang(number_words(m[0], lang)) if lang == "zh" else number_words(m[0], lang)


def _symbol(m: re.Match[str], lang: Lang) -> str:
    sym = m[0]
    if sym in ("℃", "°C"):
        return "度" if lang == "zh" else " degrees"
    if sym == "&":
        return "和" if lang == "zh" else " and "
    if sym in ("~", "～"):
        return "到" if lang == "zh" else " to "
    return sym


_D = r"(?<![\d.,])"  # not in the middle of a longer number
_E = r"(?![\d]|[.,]\d)"
# digit strings stand apart from Latin letters and other numbers (Chinese characters may touch them)
_NOT_AFTER = r"(?<![A-Za-z0-9_.,])"
_NOT_BEFORE = r"(?![A-Za-z0-9_]|[.,]\d)"

RULES: tuple[Rule, ...] = (
    # 2025-03-14, 2025/3/14, 2025.03.14
    (re.compile(_D + r"(?P<y>\d{4})([-/.])(?P<m>\d{1,2})\2(?P<d>\d{1,2})" + _E), _date_iso),
    # 2025年3月14日, 3月14号, 3月
    (re.compile(_D + r"(?:(?P<y>\d{4})\s*年\s*)?(?P<m>\d{1,2})\s*月\s*(?:(?P<d>\d{1,2})\s*(?P<dw>[日号]))?"), _zh_date),
    (re.compile(_D + r"(?P<y>\d{4})\s*年"), _zh_year),
    # 7:30, 19:05:10, 7:30 pm
    (re.compile(_D + r"(?P<h>\d{1,2})[:：](?P<min>\d{2})(?:[:：](?P<sec>\d{2}))?" + _E + _AMPM + "?"), _time),
    # 3.30 pm (British; also how Whisper writes a time it hears): a dot only with am/pm after it
    (re.compile(_D + r"(?P<h>\d{1,2})\.(?P<min>[0-5]\d)(?P<sec>)" + _E + _AMPM), _time),
    # 7 am, 7pm
    (re.compile(_D + r"(?P<h>1[0-2]|0?[1-9])(?P<min>)(?P<sec>)" + _E + _AMPM), _time),
    # $12.50, ¥200, RMB 30, US$5
    (re.compile(r"(?P<cur>US\$|\$|€|£|¥|￥|(?<![A-Za-z])(?:RMB|CNY|USD|EUR)(?![A-Za-z]))\s?(?P<amt>" + _NUM + ")" + _E
                + r"(?:\s*元)?"), _money_prefix),
    # 30元, 5 dollars, 12.5块
    (re.compile(_D + r"(?P<amt>" + _NUM + r")\s*(?P<unit>块钱|块|元|人民币|美元|(?i:dollars?|yuan|rmb|euros?)(?![A-Za-z]))"),
     _money_suffix),
    # 45%, 3.5 %
    (re.compile(_D + r"(?P<n>" + _NUM + r")\s*[%％]"), _percent),
    # digits after a code word: 'code 4829', '尾号 3456', 'PIN: 1234'
    (re.compile(r"(?P<pre>(?i:\b(?:" + CODE_WORDS_EN + r"))\s*(?:is|was|:|：|#)?\s*|(?:" + CODE_WORDS_ZH
                + r")\s*(?:是|为|：|:)?\s*)(?P<digits>\+?\d[\d \-]*\d|\d)" + _E), _coded),
    # phone / card numbers written in groups: +86 138 0013 8000, 555-123-4567, (555) 123-4567, 6222 0210 0112 3456
    (re.compile(_NOT_AFTER + r"(?:\+\d{1,3}[ \-]?)?(?:\(\d{2,4}\)[ \-]?)?\d{2,5}(?:[ \-]\d{2,5}){1,4}" + _NOT_BEFORE),
     _digit_groups),
    (re.compile(_NOT_AFTER + r"\+?\d{5,}" + _NOT_BEFORE), _digit_string),
    # 1st, 2nd, 23rd
    (re.compile(_D + r"(?P<n>\d+)(?:st|nd|rd|th)\b"), _ordinal_en),
    # 'in 2025', 'since 1998'
    (re.compile(r"(?P<pre>\b(?i:in|since|year|until|by|from|of)\s+)(?P<y>1[1-9]\d\d|20\d\d)" + _E), _year_en),
    # 2个 -> 两个
    (re.compile(_D + r"(?P<n>\d+)(?P<unit>[" + _ZH_MEASURE + "])"), _zh_measure),
    (re.compile(_D + r"[-−]?(?:" + _NUM + ")" + _E), _plain_number),
    (re.compile(r"℃|°C|&|~|～"), _symbol),
)


def _fullwidth_digits(text: str) -> str:
    return text.translate({0xFF10 + i: ord("0") + i for i in range(10)})


def normalize(text: str, lang: str | None = None) -> str:
    """`text` rewritten for speaking in `lang` ('en' or 'zh'; None = Chinese when it has Chinese characters).
    Only numbers and the symbols around them change; words, English names in Chinese text and punctuation
    are kept."""
    if lang is None:
        lang = "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"
    language = normalize_lang(lang)
    text = _fullwidth_digits(text)
    for pattern, rewrite in RULES:
        text = pattern.sub(lambda m, rewrite=rewrite: _spaced(m, rewrite(m, language), language), text)
    return re.sub(r"[ \t]{2,}", " ", text).strip() if language == "en" else text.strip()


def _spaced(m: re.Match[str], spoken: str, lang: Lang) -> str:
    """In English, keep the spoken words apart from letters they were glued to ('5km' -> 'five km')."""
    if lang == "zh":
        return spoken
    before = m.string[m.start() - 1] if m.start() > 0 else " "
    after = m.string[m.end()] if m.end() < len(m.string) else " "
    lead = " " if before.isalnum() and spoken[:1].isalnum() else ""
    tail = " " if after.isalnum() and spoken[-1:].isalnum() else ""
    return lead + spoken + tail


# ----- the other way: what a recogniser wrote ---------------------------------------------------------------------
_SPOKEN_DIGIT = {**{w: str(i) for i, w in enumerate(EN_DIGITS)}, "oh": "0", "o": "0",
                 **{c: str(i) for i, c in enumerate(ZH_DIGITS)}, "〇": "0", "幺": "1", "两": "2"}
_SPOKEN_TOKEN = re.compile(r"\d|[零〇一二三四五六七八九幺两]|\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b",
                           re.IGNORECASE)


def spoken_digits(text: str) -> str:
    """Every digit in `text`, written ('9') or spoken ('nine', '九', '幺'), in order: for comparing a
    read-back digit for digit. ('Double'/'triple' are not expanded.)"""
    return "".join(_SPOKEN_DIGIT.get(t.lower(), t) for t in _SPOKEN_TOKEN.findall(_fullwidth_digits(text)))


_ZH_DIGIT_RUN = re.compile(r"[零〇一二三四五六七八九幺](?:[，,、\s]?[零〇一二三四五六七八九幺]){3,}")
_SPLIT_DIGITS = re.compile(r"(?<=\d)[,，\s](?=\d)")
_HYPHENED_PHONE = re.compile(r"(?<![\d-])\d{3}-\d{3,4}-\d{4}(?![\d-])")


def digits_in_transcript(text: str) -> str:
    """A Chinese transcript's digits in one form: full-width digits as ASCII, runs of three or more
    spoken digits ('一三八零零一三八零零零', not '十一' or '一百') as Arabic digits, and digits Whisper
    spelt apart ('9,5,5,8', '138 0013 8000', '138-0013-8000', '1,234') joined. Runs of four or more
    (so '一二线城市' and '一五一十' stay words)."""
    text = _fullwidth_digits(text)
    text = _ZH_DIGIT_RUN.sub(lambda m: spoken_digits(m[0]), text)
    text = _HYPHENED_PHONE.sub(lambda m: m[0].replace("-", ""), text)
    return _SPLIT_DIGITS.sub("", text)


__all__ = [
    "date_words", "digits_in_transcript", "digits_words", "en_cardinal", "en_ordinal", "en_year", "group_digits",
    "money_words", "normalize", "number_words", "read_digits", "spoken_digits", "time_words", "zh_cardinal",
]
