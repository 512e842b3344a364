"""The typed events `run_episode` yields, and the episode result it returns.

Each event is a frozen dataclass with a `kind` (an `EventKind`) and the `step` it belongs to; consumers
dispatch on the class or the kind (the Qt worker turns them into signals, the CLI into JSON, training
into trajectories). `payload()` is the JSON-ready form written to the history store.

Order within one step: observed → proposed → gated → [confirmation_requested → said(reminder)* →
confirmation_answered] → acted | said | paused → resumed ... and once at the end: finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action, ConfirmAnswer, Decision, Exchange, Step

if TYPE_CHECKING:  # pragma: no cover
    from assistant_core.confirm import ConfirmationRequest
    from assistant_core.types import Observation


class EventKind(StrEnum):
    OBSERVED = "observed"
    PROPOSED = "proposed"
    GATED = "gated"
    CONFIRMATION_REQUESTED = "confirmation_requested"
    CONFIRMATION_ANSWERED = "confirmation_answered"
    ACTED = "acted"
    SAID = "said"
    PAUSED = "paused"
    RESUMED = "resumed"
    ERROR = "error"
    FINISHED = "finished"


class PauseReason(StrEnum):
    ASK_USER = "ask_user"  # the model called call_user
    LOOP_GUARD = "loop_guard"  # the same action again and again
    DEVICE_LOST = "device_lost"  # the phone went away
    HANDOVER = "handover"  # secure screen, locked phone, password or code: the user does this part
    LEFT_ALLOWED_APPS = "left_allowed_apps"  # the phone ended up in an app the caregiver did not allow


class SayPurpose(StrEnum):
    OUTPUT = "output"  # the model's message for the user
    SUMMARY = "summary"  # the spoken summary at the end
    REMINDER = "reminder"  # a confirmation reminder or re-reading
    NOTICE = "notice"  # the assistant explains something (a refusal, a change of screen)


class ErrorKind(StrEnum):
    POLICY_OUTPUT = "policy_output"  # unparseable reply: fed back to the model
    POLICY_UNAVAILABLE = "policy_unavailable"
    DEVICE = "device"
    ACTION_FAILED = "action_failed"
    TARGET_CHANGED = "target_changed"  # the screen changed before a confirmed action: dropped


class Outcome(StrEnum):
    FINISHED = "finished"  # the model said the task is done
    STOPPED = "stopped"  # the user (or the app) stopped the run
    STEP_BUDGET = "step_budget"
    POLICY_FAILED = "policy_failed"
    DEVICE_LOST = "device_lost"
    USER_ENDED = "user_ended"  # the user gave no answer to a question the run needed, or ended it there
    STUCK = "stuck"  # the loop guard fired and the user did not give a way on


class VerificationStatus(StrEnum):
    VERIFIED = "verified"
    NOT_VERIFIED = "not_verified"
    CANNOT_VERIFY = "cannot_verify"
    ALREADY = "already"  # the phone was already as asked before the run, and still is: a checked success


@dataclass(frozen=True)
class Verification:
    """The post-finish outcome check's finding, with the evidence it is based on."""

    status: VerificationStatus
    evidence: str = ""
    summary: Text | None = None  # what to say about it, in both languages (harness.verify fills it)
    kind: str = ""  # the task kind that was checked ("" when none matched)


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode came to. `steps` are the steps the model saw (including refused ones)."""

    goal: str
    outcome: Outcome
    summary: Text
    steps: tuple[Step, ...] = ()
    run_id: int | None = None
    verification: Verification | None = None
    elapsed_s: float = 0.0
    confirmations: int = 0
    refusals: int = 0
    handovers: int = 0  # parts the user had to do themselves (a PIN on a secure screen, unlocking)
    answers: tuple[Text, ...] = ()  # what read-only questions found (a query tool's words), in order
    approvals: tuple[dict[str, str], ...] = ()  # what a yes covered (item, amount, payee, app, screen)
    exchanges: tuple[Exchange, ...] = ()  # the questions put to the user and the answers, in order (typed)

    @property
    def executed_steps(self) -> int:
        return sum(1 for s in self.steps if s.executed)

    @property
    def gate_intervened(self) -> bool:
        """The one definition of "the gate stepped in", used by RL rewards, evaluation and the safety table:
        it asked the user, refused, or handed a part of the task to the user."""
        return self.confirmations + self.refusals + self.handovers > 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, Text):
        return {"en": value.en, "zh": value.zh}
    if isinstance(value, Action):
        return value.to_dict()
    if isinstance(value, Decision):
        return {"verdict": str(value.verdict), "rule": value.rule, "reason": _jsonable(value.reason),
                "details": {k: _jsonable(v) for k, v in value.details.items()}}
    if isinstance(value, StrEnum):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


@dataclass(frozen=True)
class Event:
    kind: ClassVar[EventKind]
    step: int

    def payload(self) -> dict[str, Any]:
        """JSON-ready fields (large objects such as screenshots are left out)."""
        skip = getattr(self, "_skip", ())
        data: dict[str, Any] = {"kind": str(self.kind)}
        data.update({f.name: _jsonable(getattr(self, f.name)) for f in fields(self)
                     if f.name not in skip and f.name != "step"})
        return data


@dataclass(frozen=True)
class Observed(Event):
    kind: ClassVar[EventKind] = EventKind.OBSERVED
    _skip: ClassVar[tuple[str, ...]] = ("observation",)
    foreground: str = ""
    is_secure: bool = False
    is_locked: bool = False
    elements: int = 0
    observation: Observation | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Proposed(Event):
    kind: ClassVar[EventKind] = EventKind.PROPOSED
    action: Action | None = None
    thought: str = ""
    raw_text: str = ""
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Gated(Event):
    kind: ClassVar[EventKind] = EventKind.GATED
    action: Action | None = None
    decision: Decision | None = None


@dataclass(frozen=True)
class ConfirmationRequested(Event):
    kind: ClassVar[EventKind] = EventKind.CONFIRMATION_REQUESTED
    _skip: ClassVar[tuple[str, ...]] = ("request",)
    question: Text = Text("")
    request: ConfirmationRequest | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ConfirmationAnswered(Event):
    kind: ClassVar[EventKind] = EventKind.CONFIRMATION_ANSWERED
    answer: ConfirmAnswer = ConfirmAnswer.NO
    by_default: bool = False
    carried: bool = False  # the yes given one step earlier for the same thing in the same app (no new question)


@dataclass(frozen=True)
class Acted(Event):
    kind: ClassVar[EventKind] = EventKind.ACTED
    action: Action | None = None
    duration_s: float = 0.0


@dataclass(frozen=True)
class Said(Event):
    kind: ClassVar[EventKind] = EventKind.SAID
    text: Text = Text("")
    purpose: SayPurpose = SayPurpose.NOTICE
    answer: bool = False  # the answer to a question (a read-only tool's finding); the ending says it again


@dataclass(frozen=True)
class Paused(Event):
    kind: ClassVar[EventKind] = EventKind.PAUSED
    reason: PauseReason = PauseReason.ASK_USER
    message: Text = Text("")


@dataclass(frozen=True)
class Resumed(Event):
    kind: ClassVar[EventKind] = EventKind.RESUMED
    reason: PauseReason = PauseReason.ASK_USER
    answer: str | None = None


@dataclass(frozen=True)
class ErrorEvent(Event):
    kind: ClassVar[EventKind] = EventKind.ERROR
    error: ErrorKind = ErrorKind.ACTION_FAILED
    message: Text = Text("")
    recoverable: bool = True
    detail: str = ""


@dataclass(frozen=True)
class Finished(Event):
    kind: ClassVar[EventKind] = EventKind.FINISHED
    _skip: ClassVar[tuple[str, ...]] = ("result",)
    outcome: Outcome = Outcome.FINISHED
    summary: Text = Text("")
    result: EpisodeResult | None = field(default=None, repr=False, compare=False)
