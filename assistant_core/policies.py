"""Simple policies for headless runs and tests: replayed model replies, and one that does nothing.

`ScriptedPolicy` replays raw model replies (PhoneBuddy's output format, or any dialect the real parser
reads) through the real parser (`assistant_core.policy.parsing.parse_reply`), so a scripted run meets
exactly the parsing and errors a model run would. A script file has one reply per line with newlines
written as the two characters backslash-n (`\\n`; a literal backslash is `\\\\`); blank lines and lines
starting with `#` are skipped. When the replies run out the policy finishes (`finish`), so a script
never loops forever.

`NoopPolicy` waits `waits` times and then finishes: a baseline that does nothing (PhoneSafety's "no
useful action").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assistant_core.errors import PolicyUnavailableError
from assistant_core.types import Action, Exchange, Observation, Proposal, Step

FINISH_WHEN_EXHAUSTED = '<think>The script has no more replies.</think>\n<tool_call>\n{"name": "finish", "arguments": {"text": ""}}\n</tool_call>'


def unescape_line(line: str) -> str:
    """`\\n` → newline, `\\t` → tab, `\\\\` → backslash; other characters as they are."""
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            nxt = line[i + 1]
            if nxt in "nt\\":
                out.append({"n": "\n", "t": "\t", "\\": "\\"}[nxt])
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def escape_reply(reply: str) -> str:
    """The inverse of `unescape_line`: one reply as one script line."""
    return reply.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def read_script(path: str | Path) -> list[str]:
    """The replies in a script file. A missing or unreadable file raises PolicyUnavailableError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PolicyUnavailableError(f"cannot read the script {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise PolicyUnavailableError(f"the script {path} is not UTF-8 text") from None
    return [unescape_line(line.rstrip("\r")) for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]


@dataclass
class ScriptedPolicy:
    """Replays replies in order through the real parser; `profile` picks the coordinate grid."""

    replies: list[str]
    profile: str = "phonebuddy-4b"
    position: int = 0
    seen_goals: list[str] = field(default_factory=list)
    seen_exchanges: list[tuple[Exchange, ...]] = field(default_factory=list)  # the user's answers, per call

    @classmethod
    def from_file(cls, path: str | Path, *, profile: str = "phonebuddy-4b") -> ScriptedPolicy:
        return cls(read_script(path), profile=profile)

    @classmethod
    def from_replies(cls, replies: Iterable[str], *, profile: str = "phonebuddy-4b") -> ScriptedPolicy:
        return cls(list(replies), profile=profile)

    @property
    def exhausted(self) -> bool:
        return self.position >= len(self.replies)

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        from assistant_core.policy.parsing import parse_reply

        self.seen_goals.append(goal)
        self.seen_exchanges.append(observation.exchanges)
        if self.exhausted:
            raw = FINISH_WHEN_EXHAUSTED
        else:
            raw = self.replies[self.position]
            self.position += 1
        reply = parse_reply(raw, observation.width, observation.height, self.profile)  # may raise PolicyOutputError
        return Proposal(reply.action, thought=reply.thought, raw_text=raw)


@dataclass
class NoopPolicy:
    """Waits `waits` times (`wait_ms` each), then finishes without doing anything."""

    waits: int = 2
    wait_ms: int = 500
    calls: int = 0

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal:
        self.calls += 1
        if self.calls <= self.waits:
            return Proposal(Action.wait(self.wait_ms), thought="Doing nothing (no-op policy).")
        return Proposal(Action.finish(""), thought="The no-op policy finishes.")


def action_to_reply(action: Action, width: int, height: int, *, thought: str = "") -> str:
    """One Action as a PhoneBuddy reply (0-1000 grid), e.g. to turn a recorded run into a script.

    The inverse of what the parser does for the PhoneBuddy profile, up to a pixel of rounding.
    """
    import json

    from assistant_core.types import ActionKind

    def g(x: int, y: int) -> list[int]:
        return [round(x * 1000 / width), round(y * 1000 / height)]

    kind = action.kind
    if kind in (ActionKind.CLICK, ActionKind.DOUBLE_CLICK):
        name, args = str(kind), {"points": [g(action.x, action.y)]}
    elif kind is ActionKind.LONG_PRESS:
        name, args = "long_press", {"points": [g(action.x, action.y)], "duration": action.duration_ms or 800}
    elif kind in (ActionKind.SCROLL, ActionKind.DRAG):
        name, args = str(kind), {"points": [g(action.x, action.y), g(action.x2, action.y2)],
                                 "duration": action.duration_ms or 400}
    elif kind is ActionKind.TYPE:
        name, args = "type", {"text": action.text or ""}
    elif kind is ActionKind.BUTTON_PRESS:
        name, args = "button_press", {"type": str(action.button)}
    elif kind in (ActionKind.OPEN_APP, ActionKind.CLOSE_APP):
        name, args = str(kind), {"package": action.app}
    elif kind is ActionKind.WAIT:
        name, args = "wait", {"time": action.duration_ms or 0}
    elif action.is_tool:  # the fields the parser reads back (a timer in seconds)
        name, args = str(kind), {k: v for k, v in action.to_dict().items() if k not in ("kind", "duration_ms")}
        if kind is ActionKind.SET_TIMER:
            args["seconds"] = (action.duration_ms or 0) / 1000
    else:
        name, args = str(kind), {"text": action.text or ""}
    body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"<think>{thought}</think>\n<tool_call>\n{body}\n</tool_call>"
