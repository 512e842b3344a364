"""The contracts between the parts: Action, Observation, UIElement, Proposal, Decision, Step, and the
Device and Policy protocols. Light on purpose: this module imports only the standard library, `i18n` and
the tool registry (`toolspec`, `toolbox`, which import nothing else of the project; Pillow images pass
through as opaque objects), so anything may depend on it. The tool action kinds are not listed here:
`ActionKind` has one per registered ToolSpec, and a tool's own field rules are its spec's `validate`.

Coordinates are always device pixels here. Models speak other grids (PhoneBuddy's 0-1000); the policy
parser converts before an Action is built.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from assistant_core.i18n import Text
from assistant_core.toolbox import MAX_TIMER_MS, TOOLS, Query, Setting  # noqa: F401 (re-exported)
from assistant_core.toolspec import ACTION_FIELDS

# The GUI kinds; the tool kinds come from the tool registry (assistant_core.toolbox), one per ToolSpec.
_GUI_KINDS = ("click", "double_click", "long_press", "type", "scroll", "drag", "button_press", "open_app",
              "close_app", "wait", "output", "call_user", "finish")
ActionKind = StrEnum("ActionKind", [(k.upper(), k) for k in (*_GUI_KINDS, *TOOLS)], module=__name__)  # type: ignore[misc]
ActionKind.__doc__ = "What an Action does: the GUI kinds, then one kind per registered tool action."


class Button(StrEnum):
    BACK = "back"
    HOME = "home"
    MENU = "menu"
    ENTER = "enter"
    RECENTS = "recents"
    DELETE = "delete"


POINT_KINDS = frozenset({ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.LONG_PRESS})
LINE_KINDS = frozenset({ActionKind.SCROLL, ActionKind.DRAG})
MESSAGE_KINDS = frozenset({ActionKind.OUTPUT, ActionKind.CALL_USER, ActionKind.FINISH})
APP_KINDS = frozenset({ActionKind.OPEN_APP, ActionKind.CLOSE_APP})
# Kinds that change nothing on the phone.
PASSIVE_KINDS = frozenset({ActionKind.WAIT, ActionKind.OUTPUT, ActionKind.CALL_USER, ActionKind.FINISH})
TOOL_KINDS = frozenset(ActionKind(name) for name in TOOLS)
# Tool kinds that only read the phone (the gate holds them to that).
READ_ONLY_KINDS = frozenset(ActionKind(name) for name, spec in TOOLS.items() if spec.gate.read_only)


class ActionError(ValueError):
    """An Action that cannot exist (missing point, negative duration, unknown kind...)."""


@dataclass(frozen=True)
class Action:
    """One step the assistant can take, validated on construction.

    Point kinds use (x, y); scroll and drag go from (x, y) to (x2, y2); `text` is what to type or what to
    say (output, call_user, finish); `app` is an app name or a package for open_app/close_app.
    Durations are milliseconds (long press, swipe, wait).
    """

    kind: ActionKind
    x: int | None = None
    y: int | None = None
    x2: int | None = None
    y2: int | None = None
    text: str | None = None
    button: Button | None = None
    app: str | None = None
    duration_ms: int | None = None
    # Tool fields: a phone number (call, send_text, query messages), the contact's name as the user knows
    # it (read back in confirmations), an alarm time "HH:MM", a setting and its value, a query, a link.
    number: str | None = None
    contact: str | None = None
    clock: str | None = None
    setting: Setting | None = None
    value: str | None = None
    query: Query | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        try:
            kind = ActionKind(self.kind)
        except ValueError:
            raise ActionError(f"unknown action kind {self.kind!r}") from None
        object.__setattr__(self, "kind", kind)
        for name in ("x", "y", "x2", "y2", "duration_ms"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ActionError(f"{kind}: {name} must be a number, got {value!r}")
                object.__setattr__(self, name, int(round(value)))
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ActionError(f"{kind}: duration must not be negative")
        needs_point = kind in POINT_KINDS or kind in LINE_KINDS
        if needs_point and (self.x is None or self.y is None):
            raise ActionError(f"{kind} needs a point (x, y)")
        if kind in LINE_KINDS and (self.x2 is None or self.y2 is None):
            raise ActionError(f"{kind} needs an end point (x2, y2)")
        if kind is ActionKind.TYPE and not isinstance(self.text, str):
            raise ActionError("type needs the text to type")
        if kind is ActionKind.BUTTON_PRESS:
            try:
                object.__setattr__(self, "button", Button(self.button))
            except ValueError:
                raise ActionError(f"button_press needs one of {[b.value for b in Button]}, got {self.button!r}") from None
        if kind in APP_KINDS and not (isinstance(self.app, str) and self.app.strip()):
            raise ActionError(f"{kind} needs an app name or package")
        if kind in MESSAGE_KINDS and self.text is not None and not isinstance(self.text, str):
            raise ActionError(f"{kind}: text must be a string")
        if kind in TOOL_KINDS:
            self._validate_tool(kind)

    def _validate_tool(self, kind: ActionKind) -> None:
        for name in ("number", "contact", "clock", "value", "url", "text"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ActionError(f"{kind}: {name} must be a string, got {value!r}")
        fields = {name: getattr(self, name) for name in ACTION_FIELDS}
        try:
            checked = TOOLS[kind.value].validate(dict(fields))  # the tool's own rules (assistant_core.toolbox)
        except ValueError as error:
            raise ActionError(str(error)) from None
        for name, value in checked.items():
            if name in fields:
                object.__setattr__(self, name, value)

    # Convenience constructors keep call sites readable.
    @classmethod
    def click(cls, x: float, y: float) -> Action:
        return cls(ActionKind.CLICK, x=x, y=y)

    @classmethod
    def double_click(cls, x: float, y: float) -> Action:
        return cls(ActionKind.DOUBLE_CLICK, x=x, y=y)

    @classmethod
    def long_press(cls, x: float, y: float, duration_ms: int = 800) -> Action:
        return cls(ActionKind.LONG_PRESS, x=x, y=y, duration_ms=duration_ms)

    @classmethod
    def type_text(cls, text: str) -> Action:
        return cls(ActionKind.TYPE, text=text)

    @classmethod
    def scroll(cls, x: float, y: float, x2: float, y2: float, duration_ms: int = 400) -> Action:
        return cls(ActionKind.SCROLL, x=x, y=y, x2=x2, y2=y2, duration_ms=duration_ms)

    @classmethod
    def drag(cls, x: float, y: float, x2: float, y2: float, duration_ms: int = 1000) -> Action:
        return cls(ActionKind.DRAG, x=x, y=y, x2=x2, y2=y2, duration_ms=duration_ms)

    @classmethod
    def press(cls, button: Button | str) -> Action:
        return cls(ActionKind.BUTTON_PRESS, button=Button(button))

    @classmethod
    def open_app(cls, app: str) -> Action:
        return cls(ActionKind.OPEN_APP, app=app)

    @classmethod
    def close_app(cls, app: str) -> Action:
        return cls(ActionKind.CLOSE_APP, app=app)

    @classmethod
    def wait(cls, duration_ms: int = 1000) -> Action:
        return cls(ActionKind.WAIT, duration_ms=duration_ms)

    @classmethod
    def output(cls, text: str) -> Action:
        return cls(ActionKind.OUTPUT, text=text)

    @classmethod
    def call_user(cls, text: str) -> Action:
        return cls(ActionKind.CALL_USER, text=text)

    @classmethod
    def finish(cls, text: str = "") -> Action:
        return cls(ActionKind.FINISH, text=text)

    @classmethod
    def call(cls, number: str, contact: str = "") -> Action:
        return cls(ActionKind.CALL, number=number, contact=contact or None)

    @classmethod
    def send_text(cls, number: str, text: str, contact: str = "") -> Action:
        return cls(ActionKind.SEND_TEXT, number=number, text=text, contact=contact or None)

    @classmethod
    def set_alarm(cls, clock: str, label: str = "") -> Action:
        return cls(ActionKind.SET_ALARM, clock=clock, text=label or None)

    @classmethod
    def set_timer(cls, seconds: float) -> Action:
        return cls(ActionKind.SET_TIMER, duration_ms=int(round(seconds * 1000)))

    @classmethod
    def set_setting(cls, setting: Setting | str, value: str) -> Action:
        return cls(ActionKind.SET_SETTING, setting=setting, value=value)  # type: ignore[arg-type]

    @classmethod
    def open_link(cls, url: str) -> Action:
        return cls(ActionKind.OPEN_LINK, url=url)

    @classmethod
    def ask_phone(cls, query: Query | str, *, number: str = "", contact: str = "") -> Action:
        return cls(ActionKind.QUERY, query=query, number=number or None, contact=contact or None)  # type: ignore[arg-type]

    @property
    def is_tool(self) -> bool:
        return self.kind in TOOL_KINDS

    @property
    def point(self) -> tuple[int, int] | None:
        return None if self.x is None or self.y is None else (self.x, self.y)

    @property
    def is_passive(self) -> bool:
        return self.kind in PASSIVE_KINDS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the unset fields."""
        return {k: (str(v) if isinstance(v, StrEnum) else v) for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        if not isinstance(data, dict):
            raise ActionError(f"an action must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise ActionError(f"unknown action fields: {sorted(unknown)}")
        if "kind" not in data:
            raise ActionError("an action needs a 'kind'")
        return cls(**data)

    def with_point(self, x: int, y: int) -> Action:
        return replace(self, x=x, y=y)


@dataclass(frozen=True)
class UIElement:
    """One node of the screen's accessibility tree, as `uiautomator dump` describes it."""

    bounds: tuple[int, int, int, int]  # left, top, right, bottom in device pixels
    text: str = ""
    content_desc: str = ""
    resource_id: str = ""
    class_name: str = "android.view.View"
    package: str = ""
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    focusable: bool = False
    focused: bool = False
    enabled: bool = True
    selected: bool = False
    scrollable: bool = False
    password: bool = False
    index: int = 0
    # A window or panel that takes every touch inside it (a dialog, the keyboard, the notification shade):
    # nothing drawn under it receives a tap there. Real uiautomator dumps hold one window and leave it False.
    blocks_touch: bool = False
    # Nesting depth in the dump (the root is 0; -1 when unknown): with document order it gives each
    # element's ancestors, which decide whether a scrolling parent takes a swipe (assistant_core.hittest).
    # Not compared: dumps of one screen with and without a window frame are the same screen.
    depth: int = field(default=-1, compare=False)

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    @property
    def label(self) -> str:
        """What a screen reader would say: the text, else the content description."""
        return self.text or self.content_desc

    def contains(self, x: int, y: int) -> bool:
        left, top, right, bottom = self.bounds
        return left <= x < right and top <= y < bottom

    @property
    def area(self) -> int:
        left, top, right, bottom = self.bounds
        return max(0, right - left) * max(0, bottom - top)


@dataclass(frozen=True)
class Exchange:
    """A question the run put to the user (a model's call_user, the loop guard's "what now?") and the
    user's answer, as said. Typed state: the goal stays the request as the user said it, and the policy
    reads the exchanges from `Observation.exchanges` (the prompt shows them in their own part, the fast
    path reads the answers directly). `step` is the step the question was asked at."""

    question: Text
    answer: str
    step: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "question": {"en": self.question.en, "zh": self.question.zh},
                "answer": self.answer}

    @classmethod
    def from_dict(cls, data: Any) -> Exchange:
        """An exchange from `to_dict`'s form (a history export line): ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
            raise ValueError(f"not an exchange: {data!r}")
        question, step = data.get("question", ""), data.get("step", 0)
        if isinstance(question, dict):
            en, zh = question.get("en", ""), question.get("zh", question.get("en", ""))
        else:
            en = zh = question
        if not isinstance(en, str) or not isinstance(zh, str) or not isinstance(step, int) or isinstance(step, bool):
            raise ValueError(f"not an exchange: {data!r}")
        return cls(Text(en, zh), data["answer"], step)


@dataclass(frozen=True, eq=False)
class Observation:
    """What the assistant sees of the phone at one moment.

    `screenshot` is a PIL image (RGB, width x height) or None when capture failed; `is_secure` means the
    system blocked capture (FLAG_SECURE: a black frame or an error) and the user must take over.
    `exchanges` is what the user has answered so far in this run (devices leave it empty; the loop fills
    it before the policy sees the observation).
    """

    width: int
    height: int
    foreground: str
    screenshot: Any = None
    activity: str = ""
    elements: tuple[UIElement, ...] | None = None
    ui_xml: str | None = None
    is_secure: bool = False
    is_locked: bool = False
    timestamp: float = field(default_factory=time.time)
    source: str = ""  # "screencap", "mirror", "sim", ...
    exchanges: tuple[Exchange, ...] = ()  # the user's answers in this run, in order (see Exchange)

    @property
    def screen_text(self) -> str:
        """All visible text and descriptions, one per line: data to classify, never instructions."""
        if not self.elements:
            return ""
        return "\n".join(e.label for e in self.elements if e.label)

    def element_at(self, x: int, y: int) -> UIElement | None:
        """The element a touch at (x, y) reaches, by the hit test the phones use (assistant_core.hittest:
        the topmost clickable, long-clickable or checkable element, or touch barrier, containing the
        point); when nothing there takes touches, the smallest element under the point (to name it)."""
        if not self.elements:
            return None
        from assistant_core.hittest import touch_target

        target = touch_target(self.elements, x, y)
        if target is not None:
            return target
        hits = [e for e in self.elements if e.contains(x, y) and e.area > 0]
        return min(hits, key=lambda e: e.area) if hits else None

    def focused_element(self) -> UIElement | None:
        if not self.elements:
            return None
        return next((e for e in self.elements if e.focused), None)

    def in_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height


@dataclass(frozen=True)
class Proposal:
    """What a policy suggests: the action, its reasoning, the raw model text and timings in seconds."""

    action: Action
    thought: str = ""
    raw_text: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)  # visual tokens, decode tokens/s, ...


class Verdict(StrEnum):
    ALLOW = "allow"
    CONFIRM = "confirm"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    """The safety gate's ruling on one action: the verdict, the rule that fired and a reason in words."""

    verdict: Verdict
    rule: str
    reason: Text
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOW


class ConfirmAnswer(StrEnum):
    YES = "yes"
    NO = "no"
    REPEAT = "repeat"


@dataclass(frozen=True)
class Step:
    """One completed step of an episode, as the history and the prompt builder see it."""

    index: int
    action: Action
    thought: str = ""
    raw_text: str = ""
    decision: Decision | None = None
    confirmation: ConfirmAnswer | None = None
    executed: bool = False
    error: str = ""
    foreground: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    result: str = ""  # what a tool action read or reported (the model sees it next turn)


# --- Errors a device can raise. Each carries a message a person can hear. -----------------------------


class DeviceError(RuntimeError):
    """A device problem, with a speakable bilingual explanation in `message`."""

    def __init__(self, message: Text | str, *, detail: str = ""):
        self.message = message if isinstance(message, Text) else Text(message, message)
        self.detail = detail
        super().__init__(self.message.en + (f" ({detail})" if detail else ""))


class NoDeviceError(DeviceError):
    """No phone is attached or reachable."""


class DeviceDisconnected(DeviceError):
    """The phone went away (unplugged, killed, network drop) during a run."""


class DeviceUnauthorized(DeviceError):
    """The phone has not accepted this computer's USB-debugging key."""


class DeviceOffline(DeviceError):
    """The phone is known to adb but offline (booting, reconnecting)."""


class ScreenCaptureError(DeviceError):
    """A screenshot could not be taken or was corrupt, even after a retry."""


class ActionOutOfBounds(DeviceError):
    """An action's point lies outside the screen."""


@runtime_checkable
class Device(Protocol):
    """A phone: a real one over ADB, or PhoneWorld-lite in-process or over its simulated adbd."""

    def observe(self) -> Observation: ...

    def act(self, action: Action) -> None: ...

    def installed_apps(self) -> dict[str, str]:
        """package -> label, in the phone's language."""
        ...

    def foreground(self) -> str: ...

    def reset(self) -> None:
        """Return to the start state (simulated phones only; real phones raise NotImplementedError)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Policy(Protocol):
    """Proposes the next action. Unparseable model output raises assistant_core.errors.PolicyOutputError."""

    def propose(self, goal: str, observation: Observation, history: Sequence[Step]) -> Proposal: ...
