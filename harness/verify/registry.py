"""Task kinds: small JSON files that say how to recognise a request and which check proves it was done.

    kinds = KindRegistry.load()                       # the built-in folder (harness/verify/kinds/)
    kinds = KindRegistry.load(extra=[Path("~/my-kinds")])   # plus a caregiver's or developer's folder
    match = kinds.match("Text Nina Song: \"I will be there at six\"")
    match.kind.name, match.params, match.missing     # "send_message", Params(recipient=..., text=...), ()

A kind file holds one kind (an object) or several (a list). Fields:
- `kind`: the name; `check`: a name in harness.verify.checks.CHECKS, or "unavailable" (the phone offers no
  way to read it without root; `reason` says why, in both languages);
- `describe`: [en, zh]; `priority` (higher first, default 0);
- `patterns`: {"en": [regex...], "zh": [...]} — full matches; named groups fill parameters
  (recipient, text, time, date, title, name, number, minutes, percent, value);
- `mentions`: {"en": [...], "zh": [...]} — the request is of this kind but its parameters are not in it;
- `unless`: {"en": [...], "zh": [...]} — a request (or the part after a leading "open the X app and")
  that matches one of these is never this kind, whatever its patterns and mentions say ("turn off dark
  mode" is never dark_theme_on: a request for the opposite must not be checked as this one);
- `params`: fixed parameters (namespace, key, value, compare, what, labels, folder, folders, package ...);
- `unquoted`: parameters added when the request gave its `text` without quotes ("Text Mum that I'm
  late", not 'Text Mum: "I'm late"'): such words are the gist, not the wording, so send_message adds
  {"compare": "loose"} and the check compares the sent body loosely (checks.SmsSent). A quoted text
  (quotes inside the captured group or right around it) is always compared exactly;
- `values`: {"value": {"english": "en", ...}} — maps a captured word to the value checked (case-insensitive);
- `required`: the parameters without which the check can't say anything (default: the check's own);
  `one_of`: [[a, b], ...] — each group needs at least one (a time, or the sender whose text gives it);
  a `required` name that appears in a `one_of` group counts as present when another of the group is.
Times are normalised with extract.parse_clock, minutes with parse_minutes, percentages with
parse_percent; a required one the pattern did not capture is looked for in the whole request.

A later folder's kind replaces a built-in one of the same name. A bad file is reported (`problems`) and
skipped, never fatal.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant_core.i18n import Text
from harness.verify import extract
from harness.verify.checks import CHECKS, Params

log = logging.getLogger(__name__)

BUILTIN = Path(__file__).with_name("kinds")
UNAVAILABLE = "unavailable"
_ANY_DAY = dt.date(2026, 1, 1)  # only to test that a date is present; the check resolves it
_NORMALISERS = {
    "time": extract.parse_clock,
    "minutes": extract.parse_minutes,
    "percent": extract.parse_percent,
}


class KindFileError(ValueError):
    """A kind file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Kind:
    name: str
    check: str
    describe: Text
    patterns: tuple[re.Pattern[str], ...]
    mentions: tuple[re.Pattern[str], ...]
    params: Params = Params()
    unless: tuple[re.Pattern[str], ...] = ()
    values: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    required: tuple[str, ...] = ()
    reason: Text | None = None
    one_of: tuple[tuple[str, ...], ...] = ()
    priority: int = 0
    source: str = ""
    unquoted: Params = Params()


@dataclass(frozen=True)
class KindMatch:
    kind: Kind
    params: Params
    missing: tuple[str, ...] = ()


def _compile(name: str, where: str, raw: object) -> tuple[re.Pattern[str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise KindFileError(f"{where}: `{name}` must be an object of language -> list of patterns")
    out = []
    for lang, items in raw.items():
        if lang not in ("en", "zh") or not isinstance(items, list):
            raise KindFileError(f"{where}: `{name}.{lang}` must be a list under 'en' or 'zh'")
        for item in items:
            try:
                out.append(re.compile(str(item), re.IGNORECASE))
            except re.error as error:
                raise KindFileError(f"{where}: bad pattern {item!r}: {error}") from None
    return tuple(out)


def _text(where: str, raw: object, name: str) -> Text:
    if not (isinstance(raw, list) and len(raw) == 2 and all(isinstance(x, str) and x.strip() for x in raw)):
        raise KindFileError(f"{where}: `{name}` must be [English, Chinese]")
    return Text(raw[0], raw[1])


def parse_kind(raw: object, where: str) -> Kind:
    """One kind from its JSON object; KindFileError says what is wrong."""
    if not isinstance(raw, dict):
        raise KindFileError(f"{where}: a kind must be an object")
    name, check = raw.get("kind"), raw.get("check")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise KindFileError(f"{where}: `kind` must be a snake_case name")
    if check != UNAVAILABLE and check not in CHECKS:
        raise KindFileError(f"{where}: unknown check {check!r}; known: {', '.join(sorted(CHECKS))}, {UNAVAILABLE}")
    try:
        params = Params.from_mapping(dict(raw.get("params") or {}))
        unquoted = Params.from_mapping(dict(raw.get("unquoted") or {}))
    except (ValueError, TypeError) as error:
        raise KindFileError(f"{where}: params / unquoted: {error}") from None
    values = []
    for field_name, mapping in dict(raw.get("values") or {}).items():
        if not isinstance(mapping, dict):
            raise KindFileError(f"{where}: values.{field_name} must map words to values")
        values.append((str(field_name), tuple((str(k).casefold(), str(v)) for k, v in mapping.items())))
    required = tuple(raw.get("required") or (CHECKS[check].required if check in CHECKS else ()))
    one_of = tuple(tuple(str(n) for n in group) for group in raw.get("one_of") or ())
    unknown = [r for r in required + tuple(n for g in one_of for n in g) if r not in Params.__dataclass_fields__]
    if unknown:
        raise KindFileError(f"{where}: required names unknown parameters {unknown}")
    patterns = _compile("patterns", where, raw.get("patterns"))
    mentions = _compile("mentions", where, raw.get("mentions"))
    unless = _compile("unless", where, raw.get("unless"))
    if not patterns and not mentions:
        raise KindFileError(f"{where}: a kind needs `patterns` or `mentions`")
    return Kind(
        name=name, check=str(check), describe=_text(where, raw.get("describe"), "describe"), patterns=patterns,
        mentions=mentions, unless=unless, params=params, values=tuple(values), required=required,
        reason=_text(where, raw["reason"], "reason") if "reason" in raw else None, one_of=one_of,
        priority=int(raw.get("priority", 0)), source=where, unquoted=unquoted,
    )


# A leading "open the X app and ..." / "打开X并..." clause that only says where to do the request.
_LEADING_NAVIGATION = re.compile(
    r"^(?:(?:please |can you )?(?:open|launch|start|go to) (?:the |my )?[\w .\-]+? (?:app )?(?:and(?: then)?|then),? "
    r"|(?:请)?(?:打开|进入)[^，。,.\s并然]+?(?:应用|app)?(?:并且|并|然后|再|，|,)\s*)",
    re.IGNORECASE,
)


_QUOTES = "\"'“”‘’「」『』"


def _quoted(m: re.Match[str], group: str) -> bool:
    """Whether the request put this group's words in quotes: inside the group or right around it."""
    inner = (m.group(group) or "").strip()
    if len(inner) >= 2 and inner[0] in _QUOTES and inner[-1] in _QUOTES:
        return True
    before, after = m.string[:m.start(group)].rstrip(), m.string[m.end(group):].lstrip()
    return bool(before and after) and before[-1] in _QUOTES and after[0] in _QUOTES


def _vetoed(kind: Kind, text: str) -> bool:
    return any(p.search(text) for p in kind.unless)


@dataclass
class KindRegistry:
    """Every kind known, in match order (priority, then name)."""

    kinds: list[Kind] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, *, builtin: bool = True, extra: list[Path] | tuple[Path, ...] = ()) -> KindRegistry:
        folders = ([BUILTIN] if builtin else []) + [Path(p).expanduser() for p in extra]
        by_name: dict[str, Kind] = {}
        problems: list[str] = []
        for folder in folders:
            if not folder.is_dir():
                problems.append(f"{folder}: not a folder")
                continue
            for path in sorted(folder.glob("*.json")):
                try:
                    raw = json.loads(path.read_text(encoding="utf-8"))
                    for i, item in enumerate(raw if isinstance(raw, list) else [raw]):
                        kind = parse_kind(item, f"{path.name}[{i}]" if isinstance(raw, list) else path.name)
                        by_name[kind.name] = replace(kind, source=str(path))
                except (OSError, ValueError) as error:  # JSONDecodeError and KindFileError are ValueErrors
                    log.warning("kind file skipped: %s", error)
                    problems.append(f"{path}: {error}")
        kinds = sorted(by_name.values(), key=lambda k: (-k.priority, k.name))
        return cls(kinds, problems)

    def get(self, name: str) -> Kind | None:
        return next((k for k in self.kinds if k.name == name), None)

    def match(self, goal: str) -> KindMatch | None:
        """The kind of this request and its parameters; None when no kind recognises it.
        A full pattern match beats a mention; a kind whose `unless` matches the text is passed over;
        `missing` lists required parameters not found."""
        text = " ".join(goal.split())
        # "Open Settings and turn on Wi-Fi": the app named first is only the way there; the request is
        # what follows, so that is matched first, then the whole sentence.
        candidates = [text]
        lead = _LEADING_NAVIGATION.match(text)
        if lead and lead.end() < len(text):
            candidates.insert(0, text[lead.end():])
        for candidate in candidates:
            for kind in self.kinds:
                if _vetoed(kind, candidate):
                    continue
                for pattern in kind.patterns:
                    m = pattern.search(candidate)
                    if m:
                        loose = bool(m.groupdict().get("text")) and not _quoted(m, "text")
                        return self._finish(kind, {k: v for k, v in m.groupdict().items() if v}, candidate,
                                            loose=loose)
        for kind in self.kinds:
            if not _vetoed(kind, text) and any(p.search(text) for p in kind.mentions):
                return self._finish(kind, {}, text)
        return None

    def _finish(self, kind: Kind, groups: dict[str, str], goal: str, *, loose: bool = False) -> KindMatch:
        found: dict[str, object] = {}
        for name, raw in groups.items():
            raw = raw.strip().strip("\"'“”‘’「」").strip()
            mapping = dict(next((m for f, m in kind.values if f == name), ()))
            if mapping:
                raw = mapping.get(raw.casefold(), "")
                if not raw:
                    continue
            normaliser = _NORMALISERS.get(name)
            value = normaliser(raw) if normaliser else raw
            if value is not None and value != "":
                found[name] = value
        for name in dict.fromkeys(kind.required + tuple(n for g in kind.one_of for n in g)):
            if name not in found and name in _NORMALISERS and getattr(kind.params, name) in ("", 0, -1) \
                    and not any(name in g and any(o in found for o in g) for g in kind.one_of):
                value = _NORMALISERS[name](goal)
                if value is not None:
                    found[name] = value
            if name == "date" and name in found and extract.parse_date(str(found[name]), today=_ANY_DAY) is None:
                del found[name]
        params = kind.params.merged(Params.from_mapping(found))
        if loose and params.text:
            params = params.merged(kind.unquoted)
        default = Params()
        def present(name: str) -> bool:
            return getattr(params, name) != getattr(default, name)

        missing = [n for n in kind.required if not present(n)
                   and not any(n in g and any(present(o) for o in g) for g in kind.one_of)]
        missing += [g[0] for g in kind.one_of if not any(present(o) for o in g) and g[0] not in missing]
        return KindMatch(kind, params, tuple(missing))

