"""Pure text rules for what Whisper writes: matching form (`normalize`), decoding loops (`_repetitive`), and
a phrase or sentence written again (`collapse_repeats`, `_collapse_near_copies`). Split out of
`speech.asr`, which uses them; no model, no audio here.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """Lower-case, NFKC, punctuation and spaces removed (for matching, not for display)."""
    return _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def _squash(text: str) -> str:
    return normalize(text).replace(" ", "")


_LOOP = re.compile(r"(.{1,4}?)\1{7,}")


def _repetitive(squashed: str) -> bool:
    """A short unit repeated 8 or more times in a row ('5555...', '按按按按...', '作曲作曲...'): Whisper's
    decoding loop, not speech."""
    return bool(_LOOP.search(squashed))


_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")


def _zh_cut(text: str, size: int) -> int:
    """The index in `text` just after its `size`-th character that is not punctuation."""
    seen = 0
    for i, ch in enumerate(text):
        if not _PUNCT.fullmatch(ch):
            seen += 1
            if seen == size:
                return i + 1
    return len(text)


def _ends_sentence(text: str, keep: Sequence[str], size: int, language: str) -> bool:
    if language == "zh":
        cut = _zh_cut(text, size)
        return bool(re.match(r"\s*[。！？.!?]", text[cut:]))
    return bool(_SENTENCE_END.search(keep[size - 1]))


def _first_sentences(text: str, keep: Sequence[str], size: int, language: str) -> str:
    if language == "zh":
        cut = _zh_cut(text, size)
        end = re.match(r"\s*[。！？.!?]", text[cut:])
        return text[: cut + (end.end() if end else 0)].strip()
    return " ".join(keep[:size])


def collapse_repeats(text: str, language: str, *, truncated: bool = False, seconds: float | None = None) -> str:
    """'Open J2 Open J2' -> 'Open J2', and 'A. B. A. B. A. B' -> 'A. B.': Whisper sometimes restarts the
    phrase it has just finished (more often with a short window) until the token limit cuts it off.
    The text is returned unchanged unless it is one phrase said at least twice in full, optionally followed
    by a cut-off start of a third copy (punctuation aside). A unit is at least 2 words / 3 characters, so
    "bye bye", "妈妈", "谢谢" stay as they are.

    `truncated`: the decode stopped at its token budget (a loop is the only way to get there), so one full
    phrase followed by a cut-off restart covering at least half of it is a loop too. Without it, a restart
    still counts when the phrase ends a sentence, is long (6+ words / 8+ characters) and the restart repeats
    at least 60% of it word for word ("… for you. Airplane mode is now on. I open the settings for").

    `seconds`: how long the speech was. A sentence written again with a word changed is collapsed only when
    the text holds more than anyone says in that time (`_collapse_near_copies`)."""
    if language == "zh":
        keep = [c for c in text if not _PUNCT.fullmatch(c)]
        units = keep
    else:
        keep = text.split()
        units = [normalize(w) for w in keep]
    n = len(units)
    # A cut-off restart is shorter than the phrase, so the phrase may be up to two thirds of the text.
    for size in range(2 if language != "zh" else 3, (2 * n) // 3 + 1 if truncated else int(n / 1.6) + 1):
        unit = units[:size]
        if units[size : 2 * size] != unit:
            rest = units[size:]
            restarted = bool(rest) and len(rest) < size and rest[:-1] == unit[: len(rest) - 1] \
                and unit[len(rest) - 1].startswith(rest[-1])
            if restarted and truncated and len(rest) >= max(2, (size + 1) // 2):
                return "".join(keep[:size]) if language == "zh" else " ".join(keep[:size]).rstrip(",;")
            long_enough = size >= (8 if language == "zh" else 6)
            if restarted and long_enough and len(rest) >= math.ceil(0.6 * size) and _ends_sentence(text, keep, size, language):
                return _first_sentences(text, keep, size, language)
            continue
        rest = units[2 * size :]
        expected = (unit * (len(rest) // size + 1))[: len(rest)]
        # The cut-off copy may end inside a word ("mod" for "mode").
        if rest[:-1] == expected[:-1] and (not rest or expected[-1].startswith(rest[-1])):
            return "".join(keep[:size]) if language == "zh" else " ".join(keep[:size]).rstrip(",;")
    return _collapse_near_copies(text, language, seconds)


_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")


def _units(sentence: str, language: str) -> list[str]:
    if language == "zh":
        return [c for c in sentence if not _PUNCT.fullmatch(c) and not c.isspace()]
    return [normalize(w) for w in sentence.split() if normalize(w)]


def _distance(a: Sequence[str], b: Sequence[str]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


MAX_CHARS_PER_S = {"zh": 7.0}  # fast Mandarin is 5-6 syllables a second; others: MAX_WORDS_PER_S
MAX_WORDS_PER_S = 4.5  # fast English is about 3.5-4 words a second


def _collapse_near_copies(text: str, language: str, seconds: float | None) -> str:
    """A long sentence written again with a word or two changed ('明天早上7点的闹钟已经设好了。明天早上7点的闹钟已经
    涉好了。' for 3 s of speech, heard on an AVX2 processor where another one wrote it once): Whisper restarting.
    Only when the text holds more than anyone says in `seconds` (over 7 Mandarin characters or 4.5 words a
    second): "把七点的闹钟关掉。把八点的闹钟关掉。" said in 4 s is two requests and stays. Every sentence after
    the first must be within a fifth of it (edit distance over characters / words, lengths within a fifth) and
    the first long (8+ characters / 6+ words); the first sentence is kept."""
    if not seconds or seconds <= 0:
        return text
    units_all = _units(text, language)
    if len(units_all) / seconds <= MAX_CHARS_PER_S.get(language, MAX_WORDS_PER_S):
        return text
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    if len(sentences) < 2:
        return text
    first = _units(sentences[0], language)
    if len(first) < (8 if language == "zh" else 6) or not _SENTENCE_END.search(sentences[0]):
        return text
    allowed = len(first) // 5
    for other in sentences[1:]:
        units = _units(other, language)
        if abs(len(units) - len(first)) > allowed or _distance(first, units) > allowed:
            return text
    return sentences[0]
