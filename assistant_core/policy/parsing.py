"""Model reply text -> Action, for every dialect the supported phone models write.

Public API::

    from assistant_core.policy.parsing import parse_reply, ParsedReply
    reply = parse_reply(text, width=1080, height=2400, profile="phonebuddy-4b")
    reply.action      # assistant_core.types.Action in device pixels
    reply.thought     # the reasoning (<think> block and any prose before the call)
    reply.dialect     # which syntax was found (ReplyFormat)
    reply.tool_name, reply.arguments   # the call as the model wrote it (model grid, before mapping)
    reply.notes       # what was repaired or ignored, e.g. "2 tool calls; used the first"

`parse_reply` raises only `assistant_core.errors.PolicyOutputError`, whose message says what was wrong in
words a model can act on (the loop feeds it back). `width`/`height` must be positive (ValueError otherwise:
that is a caller bug, not a model mistake).

Accepted syntaxes, whatever the profile (the profile only chooses the coordinate grid):
- PhoneBuddy / Hermes: ``<think>..</think><tool_call>{"name": "click", "arguments": {"points": [[x, y]]}}</tool_call>``,
  tolerant of a missing ``</tool_call>``, a missing ``<think>`` (generation prompts that end in ``<think>``),
  smart quotes, trailing commas, single quotes, ``arguments`` given as a JSON string, and the call sitting
  inside the reasoning text (vLLM's reasoning fields).
- XML (Qwen3.5 / Qwen3-Coder): ``<tool_call><function=click><parameter=points>[[x, y]]</parameter></function></tool_call>``;
  also ``click<tool_sep><arg_key>points</arg_key><arg_value>[[x, y]]</arg_value>``.
- AutoGLM: ``do(action="Tap", element=[x, y])``, ``finish(message="...")``, optionally inside ``<answer>``.
- Qwen ``mobile_use``: ``{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [x, y]}}``.
- The history form ``click({"points": [[x, y]]})`` that the prompt itself shows.

Two or more tool calls: the first is used and a note says so (the model should act one step at a time;
running the rest blindly on a changed screen would be unsafe, and refusing would waste a good first step).

Coordinates: pixel = round(v * size / grid), clamped to [0, size - 1]. Durations are milliseconds for
PhoneBuddy tools and seconds for AutoGLM and mobile_use, as each model's prompt says.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from assistant_core.errors import PolicyOutputError
from assistant_core.policy.names import (
    BUTTON_ALIASES,
    KNOWN_TOOLS,
    TOOL_ACTIONS,
    TOOL_ALIASES,
)
from assistant_core.policy.profiles import ModelProfile, get_profile
from assistant_core.toolbox import TOOLS
from assistant_core.types import Action, ActionError, ActionKind, Button

MAX_WAIT_MS = 60_000
# A reply longer than this is refused before any parsing (a phone step's reply is a few thousand characters;
# a hostile or broken server could send megabytes, and lenient parsing is not linear on every input).
MAX_REPLY_CHARS = 200_000
# A model coordinate further than this from the grid is not a point on the screen but garbage (or an attack:
# 1e308 overflowed the pixel arithmetic); refused rather than clamped.
MAX_GRID_REACH = 1_000_000
MAX_PRESS_MS = 10_000
MAX_GESTURE_MS = 10_000


class ReplyFormat(StrEnum):
    TOOL_JSON = "tool_json"  # <tool_call>{"name", "arguments"}</tool_call>
    TOOL_XML = "tool_xml"  # <function=...><parameter=...>
    ARG_KEY = "arg_key"  # name<tool_sep><arg_key>..</arg_key><arg_value>..</arg_value>
    AUTOGLM = "autoglm"  # do(action=...) / finish(message=...)
    MOBILE_USE = "mobile_use"  # {"name": "mobile_use", "arguments": {"action": ...}}
    CALL = "call"  # click({"points": ...}) as in the prompt's history


@dataclass(frozen=True)
class ParsedReply:
    """One parsed model reply. `arguments` are the model's own values, before grid mapping."""

    action: Action
    thought: str
    dialect: ReplyFormat
    tool_name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"', "\uff02": '"',
                               "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'"})
_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_TOOL_OPEN = re.compile(r"<tool_call>", re.IGNORECASE)
_TOOL_CLOSE = re.compile(r"</tool_call>", re.IGNORECASE)
_FUNCTION_XML = re.compile(r"<function=\s*([^>\s]+)\s*>(.*?)(?:</function>|$)", re.DOTALL)
_PARAMETER_XML = re.compile(r"<parameter=\s*([^>\s]+)\s*>(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|$)",
                            re.DOTALL)
_ARG_KEY = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)(?:</arg_value>|$)", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL)
_AUTOGLM_CALL = re.compile(r"\b(do|finish)\s*\((?=\s*(?:\w+\s*=|\)))")
_HISTORY_CALL = re.compile(r"\b(" + "|".join(sorted(TOOL_ALIASES, key=len, reverse=True)) + r")\s*\(\s*\{")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SECONDS = re.compile(r"(-?\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|secs|seconds?)?", re.IGNORECASE)


# --- public entry point ----------------------------------------------------------------------------


def parse_reply(text: str, width: int, height: int, profile: str | ModelProfile | None = None) -> ParsedReply:
    """Parse one model reply into an Action in device pixels (see the module docstring)."""
    if isinstance(width, bool) or isinstance(height, bool) or not (isinstance(width, int) and isinstance(height, int)):
        raise ValueError("width and height must be integers")
    if width <= 0 or height <= 0:
        raise ValueError(f"screen size must be positive, got {width}x{height}")
    prof = get_profile(profile)
    if not isinstance(text, str):
        raise PolicyOutputError(f"the reply must be text, got {type(text).__name__}")
    if not text.strip():
        raise PolicyOutputError("the reply is empty: expected <think>...</think> and one <tool_call>", raw_text="")
    if len(text) > MAX_REPLY_CHARS:
        raise PolicyOutputError(f"the reply is too long ({len(text):,} characters, at most {MAX_REPLY_CHARS:,}): "
                                "think briefly and give one tool call", raw_text=text[:2000])
    try:
        return _parse(text, _Grid(width, height, prof.grid))
    except PolicyOutputError as error:
        if not error.raw_text:
            error.raw_text = text
        raise
    except RecursionError:
        raise PolicyOutputError("the tool call is nested too deeply to read", raw_text=text) from None
    except (ValueError, OverflowError, TypeError, MemoryError) as error:
        # Last line of defence: whatever the checks below missed is still a bad reply, not a crash.
        raise PolicyOutputError(f"the reply could not be read ({type(error).__name__})", raw_text=text) from None


# --- structure: find the thought and the call --------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    width: int
    height: int
    grid: int

    def x(self, value: float) -> int:
        return _clamp(round(self._reach(value) * self.width / self.grid), self.width)

    def y(self, value: float) -> int:
        return _clamp(round(self._reach(value) * self.height / self.grid), self.height)

    def _reach(self, value: float) -> float:
        if not -MAX_GRID_REACH <= value <= MAX_GRID_REACH:
            raise PolicyOutputError(f"the coordinate {value:g} is out of range: use 0-{self.grid}")
        return value


def _clamp(v: int, size: int) -> int:
    return max(0, min(int(v), size - 1))


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: dict[str, Any]
    fmt: ReplyFormat
    notes: tuple[str, ...] = ()


def _split_thought(text: str) -> tuple[str, str]:
    """(thought, remainder). Handles <think>..</think>, and a lone </think> (prompt opened the block)."""
    thoughts = [m.group(1).strip() for m in _THINK_BLOCK.finditer(text)]
    remainder = _THINK_BLOCK.sub("", text)
    if "</think>" in remainder:
        head, _, remainder = remainder.partition("</think>")
        thoughts.insert(0, head.replace("<think>", "").strip())
        remainder = remainder.replace("</think>", "")
    elif "<think>" in remainder and not thoughts:
        # An unclosed <think>: everything after it is reasoning, the call may sit inside it.
        head, _, tail = remainder.partition("<think>")
        remainder = head + tail
    return "\n".join(t for t in thoughts if t), remainder


def _parse(text: str, grid: _Grid) -> ParsedReply:
    thought, remainder = _split_thought(text)
    call, prose = _find_call(remainder)
    if call is None and remainder != text:
        # The call may be inside the reasoning (vLLM reasoning fields, or a think block never closed):
        # then the thought is what comes before the call.
        call, before = _find_call(text)
        thought, prose = before.replace("<think>", "").replace("</think>", "").strip(), ""
    if call is None:
        raise PolicyOutputError(
            "no action found: reply with one tool call, e.g. "
            '<tool_call>{"name": "click", "arguments": {"points": [[500, 500]]}}</tool_call>'
        )
    prose = _clean_prose(prose)
    full_thought = "\n".join(t for t in (thought, prose) if t).strip()
    action, notes = _to_action(call, grid)
    return ParsedReply(action=action, thought=full_thought, dialect=call.fmt, tool_name=call.name,
                       arguments=call.arguments, notes=call.notes + notes)


def _clean_prose(prose: str) -> str:
    prose = prose.strip()
    for prefix in ("Thought:", "Thought：", "思考：", "思考:"):
        if prose.startswith(prefix):
            prose = prose[len(prefix):].strip()
    if prose.endswith("Action:"):
        prose = prose[: -len("Action:")].strip()
    return prose


def _find_call(text: str) -> tuple[_Call | None, str]:
    """The first call in `text` and the prose before it."""
    opens = [m.start() for m in _TOOL_OPEN.finditer(text)]
    if opens:
        bodies = []
        for i, start in enumerate(opens):
            body_start = start + len("<tool_call>")
            end = opens[i + 1] if i + 1 < len(opens) else len(text)
            close = _TOOL_CLOSE.search(text, body_start, end)
            bodies.append(text[body_start: close.start() if close else end])
        bodies = [b for b in bodies if b.strip()]
        if not bodies:
            raise PolicyOutputError("the <tool_call> block is empty: put the call's JSON inside it")
        call = _read_tool_body(bodies[0])
        if len(bodies) > 1:
            call = _with_note(call, f"{len(bodies)} tool calls; used the first")
        return call, text[: opens[0]]
    for finder in (_find_xml, _find_arg_key, _find_autoglm, _find_history_call, _find_bare_json):
        found = finder(text)
        if found is not None:
            return found
    return None, text


def _with_note(call: _Call, note: str) -> _Call:
    return _Call(call.name, call.arguments, call.fmt, call.notes + (note,))


def _read_tool_body(body: str) -> _Call:
    if "<function=" in body:
        found = _find_xml(body)
        if found is not None:
            return found[0]
    if "<arg_key>" in body:
        found = _find_arg_key(body)
        if found is not None:
            return found[0]
    stripped = body.strip()
    if _AUTOGLM_CALL.match(stripped):
        found = _find_autoglm(stripped)
        if found is not None:
            return found[0]
    obj = _loads_object(stripped, what="the tool call")
    return _call_from_object(obj)


def _call_from_object(obj: dict[str, Any]) -> _Call:
    """{"name", "arguments"} (OpenAI/Hermes), {"function": {...}}, or bare mobile_use {"action": ...}."""
    if "function" in obj and isinstance(obj["function"], dict):
        obj = obj["function"]
    name = obj.get("name")
    if name is None and "action" in obj:
        return _Call("mobile_use", dict(obj), ReplyFormat.MOBILE_USE)
    if not isinstance(name, str) or not name.strip():
        raise PolicyOutputError('the tool call needs a "name", e.g. {"name": "click", "arguments": {...}}')
    args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    if isinstance(args, str):
        args = _loads_object(args, what=f"the arguments of {name}") if args.strip() else {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise PolicyOutputError(f'the "arguments" of {name} must be a JSON object, got {type(args).__name__}')
    if name.strip().lower() == "mobile_use":
        return _Call("mobile_use", args, ReplyFormat.MOBILE_USE)
    return _Call(name.strip(), args, ReplyFormat.TOOL_JSON)


def _find_xml(text: str) -> tuple[_Call, str] | None:
    m = _FUNCTION_XML.search(text)
    if m is None:
        return None
    name = m.group(1).strip()
    args: dict[str, Any] = {}
    for p in _PARAMETER_XML.finditer(m.group(2)):
        args[p.group(1).strip()] = _xml_value(p.group(2))
    notes = ()
    if len(_FUNCTION_XML.findall(text)) > 1:
        notes = (f"{len(_FUNCTION_XML.findall(text))} tool calls; used the first",)
    if name.lower() == "mobile_use":
        return _Call("mobile_use", args, ReplyFormat.MOBILE_USE, notes), text[: m.start()]
    return _Call(name, args, ReplyFormat.TOOL_XML, notes), text[: m.start()]


def _xml_value(raw: str) -> Any:
    value = raw.strip()
    if value[:1] in "[{" or value in ("true", "false", "null") or _NUMBER.fullmatch(value):
        try:
            return _loads_any(value)
        except PolicyOutputError:
            return value
    return value


def _find_arg_key(text: str) -> tuple[_Call, str] | None:
    if "<arg_key>" not in text:
        return None
    head = text.split("<arg_key>", 1)[0]
    name_part = head.split("<tool_sep>", 1)[0] if "<tool_sep>" in head else head
    words = re.findall(r"[A-Za-z_]+", name_part)
    if not words:
        return None
    args = {m.group(1).strip(): _xml_value(m.group(2)) for m in _ARG_KEY.finditer(text)}
    start = text.rfind(words[-1], 0, len(head))
    return _Call(words[-1], args, ReplyFormat.ARG_KEY), text[: max(start, 0)]


def _find_autoglm(text: str) -> tuple[_Call, str] | None:
    answers = _ANSWER.findall(text)
    scope = answers[0] if answers else text
    m = _AUTOGLM_CALL.search(scope)
    if m is None:
        return None
    expr = _balanced_call(scope, m.start())
    kind = m.group(1)
    kwargs = _autoglm_kwargs(expr, kind)
    prose = text[: text.find("<answer>")] if answers else scope[: m.start()]
    if kind == "finish":
        return _Call("finish", {"message": kwargs.get("message", "")}, ReplyFormat.AUTOGLM), prose
    action = kwargs.pop("action", None)
    if not isinstance(action, str) or not action.strip():
        raise PolicyOutputError('do(...) needs action="...", e.g. do(action="Tap", element=[500, 500])')
    return _Call(action.strip(), kwargs, ReplyFormat.AUTOGLM), prose


def _balanced(text: str, start: int, opens: str, closes: str, quotes: str) -> str | None:
    """From `start` to the bracket that closes the one at `start`, skipping quoted strings (None: unclosed)."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in quotes:
            quote = c
        elif c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
            if depth == 0:
                return text[start: i + 1]
        i += 1
    return None


def _balanced_call(text: str, start: int) -> str:
    """A do(...)/finish(...) expression; an unclosed one (truncated reply) gets its parenthesis."""
    found = _balanced(text, start, "(", ")", "\"'")
    return found if found is not None else text[start:].rstrip() + ")"


def _autoglm_kwargs(expr: str, kind: str) -> dict[str, Any]:
    source = expr.replace("\r", "\\r").replace("\n", "\\n").translate(_SMART_QUOTES)
    try:
        tree = ast.parse(source.strip(), mode="eval")
        call = tree.body
        if not isinstance(call, ast.Call):
            raise ValueError("not a call")
        return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        pass
    # Unbalanced quotes (e.g. a message containing a quote): fall back to key="..." pairs.
    pairs = dict(re.findall(r'(\w+)\s*=\s*"(.*?)"\s*(?=,\s*\w+\s*=|\)?\s*$)', source.strip()[len(kind) + 1:]))
    pairs.update({k: _loads_any(v) for k, v in re.findall(r"(\w+)\s*=\s*(\[[^\]]*\])", source)})
    if not pairs:
        raise PolicyOutputError(f"could not read {kind}(...): write keyword arguments like "
                                'do(action="Tap", element=[500, 500])')
    return pairs


def _find_history_call(text: str) -> tuple[_Call, str] | None:
    m = _HISTORY_CALL.search(text)
    if m is None:
        return None
    obj_start = text.index("{", m.start())
    obj_text = _balanced_braces(text, obj_start)
    try:
        args = _loads_object(obj_text, what=f"the arguments of {m.group(1)}")
    except PolicyOutputError:
        return None
    return _Call(m.group(1), args, ReplyFormat.CALL), text[: m.start()]


def _balanced_braces(text: str, start: int) -> str:
    found = _balanced(text, start, "{[", "}]", '"')
    return found if found is not None else text[start:]


def _find_bare_json(text: str) -> tuple[_Call, str] | None:
    """A tool call written without tags: {"name": ..., "arguments": ...} or {"action": ...}, maybe fenced."""
    for count, m in enumerate(re.finditer(r"\{", text)):
        if count >= 50:
            break
        candidate = _balanced_braces(text, m.start())
        if '"name"' not in candidate and '"action"' not in candidate and "'name'" not in candidate:
            continue
        try:
            obj = _loads_object(candidate, what="the tool call")
        except PolicyOutputError:
            continue
        if "name" in obj or "action" in obj or "function" in obj:
            try:
                return _call_from_object(obj), text[: m.start()].replace("```json", "").replace("```", "")
            except PolicyOutputError:
                continue
    return None


# --- lenient JSON ------------------------------------------------------------------------------------


def _loads_any(s: str) -> Any:
    attempts = [s]
    fixed = re.sub(r",\s*([}\]])", r"\1", s)
    attempts.append(fixed)
    quoted = fixed.translate(_SMART_QUOTES)
    attempts.append(quoted)
    if '"' not in quoted:
        attempts.append(quoted.replace("'", '"'))
    attempts.append(_close_brackets(quoted))
    last_error = ""
    for attempt in attempts:
        try:
            return json.loads(attempt)
        except json.JSONDecodeError as error:
            last_error = f"{error.msg} at character {error.pos}"
        except RecursionError:
            raise PolicyOutputError("the JSON is nested too deeply") from None
        except ValueError:  # an integer of more than 4,300 digits
            raise PolicyOutputError("the JSON holds a number that is too long") from None
    try:  # Python literals: single quotes, True/False/None.
        value = ast.literal_eval(quoted)
        if isinstance(value, dict | list | str | int | float):
            return value
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        pass
    raise PolicyOutputError(f"not valid JSON ({last_error})")


def _close_brackets(s: str) -> str:
    """Close brackets a truncated reply left open: '{"a": [[1, 2]' -> '{"a": [[1, 2]]}'."""
    stack, quote, escaped = [], False, False
    for c in s:
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]" and stack:
            stack.pop()
    tail = s.rstrip().rstrip(",").rstrip()
    if quote or not stack or not tail or tail[-1] not in "]}":
        # Cut inside a string or a number: closing it would invent a value (a shorter text, a wrong point).
        return s
    return tail + "".join(reversed(stack))


def _loads_object(s: str, *, what: str) -> dict[str, Any]:
    s = s.strip()
    if s.startswith("```"):
        s = s.strip("`").strip()
        if s.lower().startswith("json"):
            s = s[4:].strip()
    start = s.find("{")
    if start < 0:
        raise PolicyOutputError(f'{what} is not a JSON object: expected {{"name": ..., "arguments": {{...}}}}, '
                                f"got {s[:80]!r}")
    end = s.rfind("}")
    body = s[start: end + 1] if end > start else s[start:]
    try:
        value = _loads_any(body)
    except PolicyOutputError as error:
        raise PolicyOutputError(f"{what} is {error}") from None
    if not isinstance(value, dict):
        raise PolicyOutputError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


# --- arguments -> Action -----------------------------------------------------------------------------


def _canonical(name: str) -> str:
    key = re.sub(r"[\s\-]+", "_", name.strip().lower())
    return TOOL_ALIASES.get(key, key)


def _to_action(call: _Call, grid: _Grid) -> tuple[Action, tuple[str, ...]]:
    if call.fmt is ReplyFormat.MOBILE_USE:
        return _mobile_use_action(call.arguments, grid)
    if call.fmt is ReplyFormat.AUTOGLM:
        return _autoglm_action(call.name, call.arguments, grid)
    return _tool_action(call.name, call.arguments, grid, seconds=False)


def _build(factory, *args, **kwargs) -> Action:
    try:
        return factory(*args, **kwargs)
    except (ActionError, ValueError, TypeError) as error:
        raise PolicyOutputError(f"invalid action: {error}") from None


def _tool_action(name: str, args: Mapping[str, Any], grid: _Grid, *, seconds: bool) -> tuple[Action, tuple[str, ...]]:
    tool = _canonical(name)
    notes: list[str] = []
    if tool in ("back", "home", "enter"):
        return _build(Action.press, Button(tool)), ()
    if tool in ("click", "double_click", "long_press"):
        x, y = _point(args, 0, tool, grid)
        if tool == "click":
            return _build(Action.click, x, y), ()
        if tool == "double_click":
            return _build(Action.double_click, x, y), ()
        duration = _duration(args, ("duration", "time", "duration_ms"), seconds, 800, MAX_PRESS_MS, notes)
        return _build(Action.long_press, x, y, duration_ms=duration), tuple(notes)
    if tool in ("scroll", "drag"):
        (x1, y1), (x2, y2) = _line(args, tool, grid)
        default = 400 if tool == "scroll" else 1000
        duration = _duration(args, ("duration", "time", "duration_ms"), seconds, default, MAX_GESTURE_MS, notes)
        factory = Action.scroll if tool == "scroll" else Action.drag
        return _build(factory, x1, y1, x2, y2, duration_ms=duration), tuple(notes)
    if tool == "type":
        text = _text(args, ("text", "content", "value", "input", "string"))
        if text is None:
            raise PolicyOutputError('type needs "text": the text to type')
        return _build(Action.type_text, text), ()
    if tool == "button_press":
        return _build(Action.press, _button(args)), ()
    if tool in ("open_app", "close_app"):
        app = _text(args, ("package", "app", "app_name", "name", "text", "package_name"))
        if not app or not app.strip():
            raise PolicyOutputError(f'{tool} needs "package": the app\'s package name or its name')
        factory = Action.open_app if tool == "open_app" else Action.close_app
        return _build(factory, app.strip()), ()
    if tool == "wait":
        ms = _duration(args, ("time", "duration", "ms", "seconds"), seconds, 1000, MAX_WAIT_MS, notes)
        return _build(Action.wait, ms), tuple(notes)
    if tool in ("output", "call_user", "finish"):
        text = _text(args, ("text", "message", "content", "answer", "return", "status", "question"))
        if tool != "finish" and not (text or "").strip():
            raise PolicyOutputError(f'{tool} needs "text": what to say to the user')
        kind = {"output": ActionKind.OUTPUT, "call_user": ActionKind.CALL_USER, "finish": ActionKind.FINISH}[tool]
        return _build(Action, kind, text=text or ""), ()
    if tool in TOOL_ACTIONS:
        return _tool_call_action(tool, args), ()
    raise PolicyOutputError(f"unknown tool {name!r}; use one of: {', '.join(KNOWN_TOOLS)}")


def _tool_call_action(tool: str, args: Mapping[str, Any]) -> Action:
    """A tool action from its arguments, as its ToolSpec names them (assistant_core.toolbox), validated like
    every Action (a bad one is a PolicyOutputError). Only the spec's own fields are kept."""
    spec = TOOLS[tool]
    fields: dict[str, Any] = {"kind": tool}
    for item in spec.inputs:
        value = _text(args, item.keys)
        if value is not None and str(value).strip() and item.field not in fields:
            fields[item.field] = str(value).strip()
    if "number" in spec.fields and "number" not in fields and "contact" in fields \
            and re.fullmatch(r"\+?[\d\s\-()]{3,}", fields["contact"]):
        fields["number"] = fields.pop("contact")
    if spec.convert is not None:
        try:
            fields.update(spec.convert(args))
        except ValueError as error:
            raise PolicyOutputError(str(error)) from None
    return _build(Action.from_dict, fields)


def _mobile_use_action(args: Mapping[str, Any], grid: _Grid) -> tuple[Action, tuple[str, ...]]:
    action = args.get("action")
    if not isinstance(action, str) or not action.strip():
        raise PolicyOutputError('mobile_use needs "action", e.g. {"action": "click", "coordinate": [500, 500]}')
    name = _canonical(action)
    fixed: dict[str, Any] = dict(args)
    if name in ("scroll", "drag") and "coordinate" in args and "coordinate2" in args:
        fixed["points"] = [args["coordinate"], args["coordinate2"]]
    if name == "finish" and action.strip().lower() == "terminate" and "text" not in args:
        fixed["text"] = str(args.get("status", ""))
    if name == "button_press" and "button" not in args and "text" in args:
        fixed["button"] = args["text"]
    if name == "open_app" and "text" in args:
        fixed["app"] = args["text"]
    return _tool_action(name, fixed, grid, seconds=True)


_AUTOGLM_NAMES = {
    "tap": "click", "double tap": "double_click", "long press": "long_press", "swipe": "scroll",
    "type": "type", "type_name": "type", "launch": "open_app", "back": "back", "home": "home",
    "enter": "enter", "wait": "wait", "take_over": "call_user", "interact": "call_user",
    "finish": "finish", "note": "output", "call_api": "output",
}


def _autoglm_action(name: str, args: Mapping[str, Any], grid: _Grid) -> tuple[Action, tuple[str, ...]]:
    tool = _AUTOGLM_NAMES.get(name.strip().lower(), _canonical(name))
    fixed: dict[str, Any] = dict(args)
    if tool == "scroll" and "start" in args and "end" in args:
        fixed["points"] = [args["start"], args["end"]]
    if tool == "call_user" and "message" not in args:
        fixed["message"] = "Please help with the phone."
    action, notes = _tool_action(tool, fixed, grid, seconds=True)
    if tool == "click" and isinstance(args.get("message"), str) and args["message"].strip():
        notes = notes + (f"the model marked this tap as sensitive: {args['message'].strip()}",)
    return action, notes


def _text(args: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
    return None


def _button(args: Mapping[str, Any]) -> Button:
    raw = _text(args, ("type", "button", "key", "keycode", "name", "text"))
    if raw is None:
        raise PolicyOutputError('button_press needs "type": one of back, home, menu, enter')
    key = raw.strip().lower().replace(" ", "_")
    if key.startswith("press_"):
        key = key[len("press_"):]
    try:
        return BUTTON_ALIASES[key]
    except KeyError:
        raise PolicyOutputError(f"unknown button {raw!r}; use one of back, home, menu, enter") from None


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise PolicyOutputError(f"{what} must be a number, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        raise PolicyOutputError(f"{what} must be a number, got {value!r}")
    if not math.isfinite(number):
        raise PolicyOutputError(f"{what} must be a finite number, got {value!r}")
    return number


def _as_pair(value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str):
        numbers = _NUMBER.findall(value)
        if len(numbers) < 2:
            raise PolicyOutputError(f"{what} must be [x, y], got {value!r}")
        value = numbers[:2]
    if isinstance(value, Mapping):
        if "x" in value and "y" in value:
            value = [value["x"], value["y"]]
        else:
            raise PolicyOutputError(f"{what} must be [x, y], got {value!r}")
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], list | tuple | str):
        return _as_pair(value[0], what)
    if isinstance(value, list | tuple) and len(value) == 4 and all(isinstance(v, int | float) for v in value):
        # A box [x1, y1, x2, y2]: its centre.
        x1, y1, x2, y2 = (_number(v, what) for v in value)
        return (x1 + x2) / 2, (y1 + y2) / 2
    if not isinstance(value, list | tuple) or len(value) < 2:
        raise PolicyOutputError(f"{what} must be [x, y], got {value!r}")
    return _number(value[0], what), _number(value[1], what)


_POINT_KEYS = ("points", "point", "coordinate", "coordinates", "coords", "element", "position", "start_box",
               "location", "xy")


def _point_source(args: Mapping[str, Any]) -> Any:
    for key in _POINT_KEYS:
        if args.get(key) is not None:
            return args[key]
    if "x" in args and "y" in args:
        return [args["x"], args["y"]]
    return None


def _point(args: Mapping[str, Any], index: int, tool: str, grid: _Grid) -> tuple[int, int]:
    source = _point_source(args)
    if source is None:
        raise PolicyOutputError(f'{tool} needs "points": [[x, y]] on the 0-{grid.grid} grid')
    if isinstance(source, list | tuple) and source and isinstance(source[0], list | tuple | str | Mapping):
        if index >= len(source):
            raise PolicyOutputError(f"{tool} needs {index + 1} points, got {len(source)}")
        source = source[index]
    x, y = _as_pair(source, f"{tool} point")
    return grid.x(x), grid.y(y)


def _line(args: Mapping[str, Any], tool: str, grid: _Grid) -> tuple[tuple[int, int], tuple[int, int]]:
    source = _point_source(args)
    if isinstance(source, list | tuple) and len(source) >= 2 and all(
            isinstance(p, list | tuple | str | Mapping) for p in source[:2]):
        return _point(args, 0, tool, grid), _point(args, 1, tool, grid)
    if isinstance(source, list | tuple) and len(source) == 4 and all(isinstance(v, int | float) for v in source):
        x1, y1, x2, y2 = (_number(v, f"{tool} points") for v in source)
        return (grid.x(x1), grid.y(y1)), (grid.x(x2), grid.y(y2))
    for a, b in (("start", "end"), ("from", "to"), ("start_point", "end_point"), ("coordinate", "coordinate2")):
        if args.get(a) is not None and args.get(b) is not None:
            p1, p2 = _as_pair(args[a], f"{tool} start"), _as_pair(args[b], f"{tool} end")
            return (grid.x(p1[0]), grid.y(p1[1])), (grid.x(p2[0]), grid.y(p2[1]))
    direction = args.get("direction")
    if isinstance(direction, str) and direction.strip().lower() in ("up", "down", "left", "right"):
        return _direction_line(direction.strip().lower(), source, grid)
    raise PolicyOutputError(f'{tool} needs "points": [[x1, y1], [x2, y2]] on the 0-{grid.grid} grid')


def _direction_line(direction: str, source: Any, grid: _Grid) -> tuple[tuple[int, int], tuple[int, int]]:
    """A finger swipe in `direction` (the model's gesture), through a given point or the screen centre."""
    cx, cy = grid.grid / 2, grid.grid / 2
    if source is not None:
        cx, cy = _as_pair(source, "scroll point")
    span = grid.grid * 0.2
    dx, dy = {"up": (0, -span), "down": (0, span), "left": (-span, 0), "right": (span, 0)}[direction]
    return (grid.x(cx - dx), grid.y(cy - dy)), (grid.x(cx + dx), grid.y(cy + dy))


def _duration(args: Mapping[str, Any], keys: tuple[str, ...], seconds: bool, default: int, limit: int,
              notes: list[str]) -> int:
    for key in keys:
        value = args.get(key)
        if value is None:
            continue
        ms = _to_ms(value, seconds=seconds and key != "duration_ms" and key != "ms", what=key)
        if ms > limit:
            notes.append(f"{key} {value!r} capped at {limit} ms")
            ms = limit
        return ms
    return default


def _to_ms(value: Any, *, seconds: bool, what: str) -> int:
    if isinstance(value, str):
        m = _SECONDS.search(value)
        if m is None:
            raise PolicyOutputError(f"{what} must be a duration, got {value!r}")
        number = _number(m.group(1), what)
        unit = (m.group(2) or "").lower()
        if unit.startswith("ms") or unit.startswith("milli"):
            scale = 1.0
        elif unit:
            scale = 1000.0
        else:
            scale = 1000.0 if seconds else 1.0
    else:
        number = _number(value, what)
        scale = 1000.0 if seconds else 1.0
    if number < 0:
        raise PolicyOutputError(f"{what} must not be negative, got {value!r}")
    return int(round(min(number * scale, 10**9)))
