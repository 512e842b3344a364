"""The loop's settings and small parts, beside the loop itself (assistant_core.loop): its bounds (`LoopConfig`),
what the run record says about the set-up (`RunInfo`), the user channel for free questions (with scripted and
callback users for tests and the command line), the outcome-check protocol, the consent carried one step and
the purchase approval (one question per purchase), redaction of secrets in what is shown, spoken or stored,
and the screen tests that hand a protected screen to the user.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from assistant_core.confirm import (
    PURCHASE_CATEGORIES,
    ConfirmationRequest,
    Patience,
)
from assistant_core.events import (
    EpisodeResult,
    Verification,
)
from assistant_core.i18n import Text
from assistant_core.safety import (
    Category,
    GateContext,
    Rule,
    screen_codes,
)
from assistant_core.settings import CaregiverSettings
from assistant_core.types import (
    Action,
    ActionKind,
    Decision,
    Device,
    Observation,
    Proposal,
    Step,
)

log = logging.getLogger(__name__)


REDACTED = "•••"


_SECRET_DIGITS = re.compile(r"(?<!\d)\d{4,8}(?!\d)")


@runtime_checkable
class UserChannel(Protocol):
    """Asks the user a free question and waits (call_user, loop guard, hand-over). None: no answer or stop."""

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None: ...


@dataclass
class CallbackUser:
    """A UserChannel around a plain callable `question -> answer`."""

    callback: Callable[[Text], str | None]

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        return self.callback(question)


@dataclass
class ScriptedUser:
    """Answers from a list in order; None when it runs out. Records the questions (tests, CLI)."""

    answers: list[str | None] = field(default_factory=list)
    questions: list[Text] = field(default_factory=list)

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None


class OutcomeCheck(Protocol):
    """After the run: is the goal really achieved? Returns verified / not_verified / cannot_verify."""

    def __call__(self, *, goal: str, result: EpisodeResult, device: Device) -> Verification: ...


@dataclass(frozen=True)
class LoopConfig:
    step_budget: int = 30
    loop_guard_repeats: int = 6
    loop_guard_hard_limit: int = 20
    max_policy_retries: int = 3
    patience: Patience = Patience()
    reconnect_attempts: int = 10
    reconnect_delay_s: float = 2.0
    max_handovers: int = 5
    max_wait_ms: int = 60_000
    user_timeout_s: float | None = None
    thumbnails: bool = True
    lang: str = "en"
    # One question per purchase: a yes covers the later steps of the same purchase (same amount and payee).
    # Off: every step the gate rules CONFIRM is asked (tests that read each read-back).
    one_question_per_purchase: bool = True


    @classmethod
    def from_settings(cls, settings: CaregiverSettings, **overrides: object) -> LoopConfig:
        """The loop's bounds from the caregiver's settings (step budget, patience, loop guard, language)."""
        values: dict[str, object] = {
            "step_budget": settings.step_budget,
            "loop_guard_repeats": settings.loop_guard_repeats,
            "patience": Patience(window_s=settings.confirm_window_s, reminders=settings.confirm_reminders),
            "lang": settings.language,
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


def gate_context_from(settings: CaregiverSettings, app_labels: dict[str, str]) -> GateContext:
    """The gate's context from the caregiver's settings and the phone's app labels."""
    return GateContext(allowed_apps=settings.allowed_apps, always_confirm=settings.always_confirm,
                       app_labels=dict(app_labels), lang=settings.language)


# Consent may carry over one step only for these (never for money or for anything sent to someone).
CARRY_CATEGORIES: frozenset[Category] = frozenset(
    {Category.DELETE, Category.INSTALL, Category.UNINSTALL, Category.SECURITY, Category.ACCOUNT, Category.PERMISSION}
)


@dataclass(frozen=True)
class _Consent:
    """What the user said yes to, for the app's own confirmation dialog in the very next step."""

    category: Category | None
    foreground: str
    how_much: str
    to_whom: str

    def carries_from(self, prior: _Consent) -> bool:
        return (self.category is not None and self.category in CARRY_CATEGORIES and self == prior
                and not self.how_much and not self.to_whom)


# How many later steps one yes to a purchase may cover (Buy now → Pay in the shop → Pay in the wallet).
MAX_COVERED_STEPS = 2


_MONEY_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _money(amount: str) -> float | None:
    match = _MONEY_NUMBER.search(amount or "")
    if match is None:
        return None
    try:
        return round(float(match.group(0).replace(",", "")), 2)
    except ValueError:
        return None


@dataclass
class _Approval:
    """A yes to one purchase: what was approved, on which screen and in which app (recorded in the history).
    A later step of the same purchase (a payment or purchase step whose amount and payee are the same) is
    covered by it, at most MAX_COVERED_STEPS times; any difference asks again. The gate still judges every
    step: only its question is answered by this yes."""

    step: int
    amount: str
    payee: str
    item: str
    address: str
    app: str
    package: str
    screen: str  # the button the yes was for
    covered: int = 0

    def covers(self, request: ConfirmationRequest) -> bool:
        value = _money(self.amount)
        return (request.category in PURCHASE_CATEGORIES and self.covered < MAX_COVERED_STEPS
                and value is not None and _money(request.how_much) == value
                and bool(request.payee) and request.payee.casefold() == self.payee.casefold())

    def record(self) -> dict[str, str]:
        return {"step": str(self.step), "amount": self.amount, "payee": self.payee, "item": self.item,
                "address": self.address, "app": self.app, "package": self.package, "screen": self.screen}


@dataclass(frozen=True)
class RunInfo:
    """What the history's run row records about the run's set-up. `started(run_id)`, when given, is told
    the run record's id as soon as it exists (the assistant, phonebuddy.assistant, writes the conversation
    rows with it); it is called on the loop's thread."""

    device: str = ""
    policy: str = ""
    started: Callable[[int], None] | None = None


def screen_needs_handover(obs: Observation) -> bool:
    """Whether the loop hands this screen to the user instead of asking the policy: a secure or locked
    screen, or a capture that came back all black (a protected screen the device did not report)."""
    return obs.is_secure or obs.is_locked or _is_black(obs.screenshot)


def _is_black(image: object) -> bool:
    """Whether a PIL screenshot is entirely black (FLAG_SECURE captures come back like this)."""
    getbbox = getattr(image, "getbbox", None)
    if getbbox is None:
        return False
    return getbbox() is None


def _screen_fingerprint(obs: Observation) -> int:
    """What the app shows, for 'did anything change': the non-system nodes' text, place and state."""
    return hash(tuple((e.label, e.bounds, e.checked, e.focused, e.selected) for e in obs.elements or ()
                      if not e.resource_id.startswith("com.android.systemui") and e.package != "com.android.systemui")
                + (obs.foreground, obs.activity))


def _recent_typed(steps: Sequence[Step]) -> str:
    """The text typed since the last non-typing action (what a Send button would send)."""
    typed: list[str] = []
    for step in reversed(steps):
        if not step.executed:
            continue
        if step.action.kind is ActionKind.TYPE:
            typed.append(step.action.text or "")
            continue
        break
    return "".join(reversed(typed)).strip()


def _redact(proposal: Proposal, decision: Decision, obs: Observation | None = None) -> tuple[Action, str, str]:
    """The action, raw text and thought as they may be shown, spoken or stored: secrets replaced (a typed
    secret, a code in speech, and any one-time code visible on the screen)."""
    action, raw, thought = proposal.action, proposal.raw_text, proposal.thought
    for code in sorted(screen_codes(obs) if obs is not None else (), key=len, reverse=True):
        raw, thought = raw.replace(code, REDACTED), thought.replace(code, REDACTED)
        if action.text and code in action.text:
            action = replace(action, text=action.text.replace(code, REDACTED))
    if decision.rule == str(Rule.HANDOVER_SECRET_FIELD) and action.kind is ActionKind.TYPE and action.text:
        secret = action.text.strip()
        if secret:
            raw = raw.replace(secret, REDACTED)
            thought = thought.replace(secret, REDACTED)
        return replace(action, text=REDACTED), raw, thought
    if decision.rule == str(Rule.DENY_SECRET_SPEECH) and action.text:
        return (replace(action, text=_SECRET_DIGITS.sub(REDACTED, action.text)),
                _SECRET_DIGITS.sub(REDACTED, raw), _SECRET_DIGITS.sub(REDACTED, thought))
    return action, raw, thought
