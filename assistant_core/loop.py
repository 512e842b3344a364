"""The one agent loop: `run_episode(goal, ...)` is a generator of typed events that returns an EpisodeResult.

    gen = run_episode(goal, device=..., policy=..., confirmer=..., context=GateContext(...))
    for event in gen: ...            # or: result = yield from run_episode(...)

Each step: observe → policy.propose → SafetyGate.check → (confirm) → device.act → foreground check.
The model proposes; this code decides. The gate runs on every action the model proposes, including
output/finish (which may not carry a secret); nothing the model writes can skip it.

Behaviour (every bound is in `LoopConfig`):
- step budget: at most `step_budget` proposals are acted on; then the run ends as STEP_BUDGET.
- loop guard: the same action on the same target on an unchanged screen `loop_guard_repeats` times in
  a row (or the same action `loop_guard_hard_limit` times in a row whatever the screen does) pauses and
  asks the user what to do (no answer: STUCK). The repeated action is not dispatched again. Repeats
  that change the screen (pressing delete to clear a field) are progress, not a loop.
- `PolicyOutputError` is recorded as a step with the error (the model sees it next turn) and retried
  up to `max_policy_retries` times in a row; `PolicyUnavailableError` ends the run.
- output → a `said` event; call_user → paused, the question goes to the `UserChannel`, the question and
  answer are kept as an `Exchange` (typed state: the goal is never changed; the policy reads them from
  `Observation.exchanges`, the result from `EpisodeResult.exchanges`) and the run resumes (no answer:
  USER_ENDED); finish → a spoken summary.
- DENY → the reason is said and the model is told; hand-over rules (secure screen, locked phone,
  password/code field) pause and ask the user to do that part, then resume.
- CONFIRM → a ConfirmationRequest goes through the `Confirmer` with `Patience` (reminders, no answer
  means no). On yes the screen is captured again just before dispatch; if the target changed or the
  gate now decides differently, the action is dropped and the step repeated.
- after every dispatched action the foreground app is checked: outside the allowed set → paused, back
  (then home) pressed, resumed.
- stop: the `stop` event is checked between every phase; a stop during a question counts as no.
- `DeviceDisconnected` anywhere → paused, `reconnect(attempt)` tried up to `reconnect_attempts` times
  with `sleep(reconnect_delay_s)` between (no luck: DEVICE_LOST); an action in flight is not redone.
- every event is written to the history store (when given) as it is yielded, so before the action it
  precedes is dispatched; step rows and consent rows are fsync'd (see history.py).
- `outcome_check(goal=..., result=..., device=...)` (optional) runs after the end and fills
  `EpisodeResult.verification`; if it has `before_run(goal=..., device=...)` that runs before the first
  step (so a state already true before the run is not taken as success). A verification carrying a
  `summary` is said (SUMMARY) and appended to the run's summary and history record.

Its settings and small parts (LoopConfig, RunInfo, the user channel, consent and purchase approval,
redaction, the hand-over screen tests) are in assistant_core/loop_parts.py; the conversation rows are the
assistant's (phonebuddy/assistant.py), written from these events.

No printing, no globals, no wall-clock sleeping of its own: time comes from `clock`, waiting from
`sleep` (by default an interruptible wait on the stop event).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace

from assistant_core.confirm import (
    PURCHASE_CATEGORIES,
    ConfirmationRequest,
    Confirmer,
    build_request,
    confirmation_flow,
)
from assistant_core.endings import FEEDBACK_NO_ANSWER, ending_text
from assistant_core.errors import PolicyOutputError, PolicyUnavailableError
from assistant_core.events import (
    Acted,
    ConfirmationAnswered,
    ConfirmationRequested,
    EpisodeResult,
    ErrorEvent,
    ErrorKind,
    Event,
    Finished,
    Gated,
    Observed,
    Outcome,
    Paused,
    PauseReason,
    Proposed,
    Resumed,
    Said,
    SayPurpose,
    Verification,
    VerificationStatus,
)
from assistant_core.history import EventRow, HistoryStore, make_thumbnail
from assistant_core.i18n import Catalog, Text
from assistant_core.loop_parts import (  # noqa: F401  (re-exported: where callers have always found them)
    LoopConfig,
    OutcomeCheck,
    RunInfo,
    ScriptedUser,
    UserChannel,
    _Approval,
    _Consent,
    _is_black,
    _money,
    _recent_typed,
    _redact,
    _screen_fingerprint,
    screen_needs_handover,
)
from assistant_core.safety import (
    HANDOVER_RULES,
    GateContext,
    Rule,
    SafetyGate,
    action_signature,
    describe_under_way,
    foreground_allowed,
    screen_handover,
    target_changed,
)
from assistant_core.session import MetaCommand, parse_meta
from assistant_core.types import (
    Action,
    ActionKind,
    Button,
    ConfirmAnswer,
    Decision,
    Device,
    DeviceDisconnected,
    DeviceError,
    Exchange,
    Observation,
    Policy,
    Proposal,
    Step,
    Verdict,
)

log = logging.getLogger(__name__)

MSG = Catalog(
    "loop",
    {
        "done": "Done. {text}",
        "done_plain": "Done.",
        "stopped": "Stopped. I did not do anything more.",
        "budget": "I used all {n} steps I'm allowed for one request and stopped. The task may not be finished.",
        "policy_failed": "I could not work out the next step, so I stopped.",
        "policy_unavailable": "The assistant's model is not available: {detail}",
        "bad_reply": "The model's reply could not be understood; asking again.",
        "device_lost": "The phone disconnected. I'll wait for it to come back.",
        "device_back": "The phone is back.",
        "device_gone": "The phone did not come back, so I stopped.",
        "device_failed": "The phone stopped responding ({detail}), so I stopped. Nothing more was done.",
        "loop_guard": "I've tried the same thing {n} times and it isn't working. What should I do? Say stop to end.",
        "stuck": "The same step kept failing, so I stopped.",
        "handover_done": "When you are done, say or type “done”, and I'll look at the screen again.",
        "still_protected": "The screen is still protected.",
        "no_answer": "I didn't get an answer, so I stopped here.",
        "left_apps": "That opened {app}, which your caregiver did not allow. Going back.",
        "target_changed": "The screen changed before I could do that, so I did not do it. Looking again.",
        "declined": "OK, I did not do it.",
        "action_failed": "That step did not work: {detail}",
        "user_ended": "OK, I stopped here.",
        "carried": "You already said yes, so I'm confirming it in {app}.",
        "as_you_said": "Paying {amount} to {payee}, as you said.",
        "delivered_to": "It goes to {address}.",
    },
)

# What the model is told (English: the prompt language of the supported models).
FEEDBACK_DENIED = "The safety gate refused this action: {reason} Choose a different step or finish."
FEEDBACK_DECLINED = "The user said no to this action. Do not try it again; choose another step or finish."
FEEDBACK_CHANGED = "The screen changed before the action ran; it was not done. Look at the new screen."
FEEDBACK_HANDOVER = "The user did this part themselves (a protected screen, a password or a code)."
FEEDBACK_LEFT = "That action left the allowed apps; the assistant went back. Stay in the allowed apps."
FEEDBACK_ACTION_FAILED = "The action could not be done: {detail}"
FEEDBACK_DISCONNECTED = "The phone disconnected during this action; it may not have happened. Look again."


class _Ended(Exception):
    """Internal: ends the episode with an outcome (raised inside helpers, caught in run())."""

    def __init__(self, outcome: Outcome, summary: Text):
        self.outcome = outcome
        self.summary = summary
        super().__init__(str(outcome))


def _interruptible_sleep(stop: threading.Event) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        stop.wait(max(0.0, seconds))

    return sleep


def run_episode(
    goal: str,
    *,
    device: Device,
    policy: Policy,
    confirmer: Confirmer,
    context: GateContext,
    gate: SafetyGate | None = None,
    user: UserChannel | None = None,
    history: HistoryStore | None = None,
    config: LoopConfig | None = None,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
    reconnect: Callable[[int], bool] | None = None,
    outcome_check: OutcomeCheck | None = None,
    info: RunInfo | None = None,
) -> Generator[Event, None, EpisodeResult]:
    """Run one request to its end, yielding events; returns the EpisodeResult (see the module docstring).

    `reconnect(attempt) -> bool` says whether the phone is back (default: `device.foreground()` answers).
    Closing the generator early records the run as stopped.
    """
    stop = stop or threading.Event()
    episode = _Episode(
        goal=goal, device=device, policy=policy, confirmer=confirmer, context=context, gate=gate or SafetyGate(),
        user=user, history=history, config=config or LoopConfig(), stop=stop, clock=clock,
        sleep=sleep or _interruptible_sleep(stop), reconnect=reconnect, outcome_check=outcome_check,
        info=info or RunInfo(),
    )
    return (yield from episode.run())


@dataclass
class _Episode:
    goal: str
    device: Device
    policy: Policy
    confirmer: Confirmer
    context: GateContext
    gate: SafetyGate
    user: UserChannel | None
    history: HistoryStore | None
    config: LoopConfig
    stop: threading.Event
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    reconnect: Callable[[int], bool] | None
    outcome_check: OutcomeCheck | None
    info: RunInfo
    steps: list[Step] = field(default_factory=list)
    run_id: int | None = None
    seq: int = 0
    index: int = 0  # steps that consumed the budget
    exchanges: list[Exchange] = field(default_factory=list)  # the user's answers, in order (never glued onto the goal)
    confirmations: int = 0
    refusals: int = 0
    handovers: int = 0
    repeat_signature: str = ""
    repeat_screen: int = 0
    repeat_count: int = 0  # same action, same screen
    repeat_total: int = 0  # same action, any screen
    finished: bool = False
    unanswered: bool = False  # the last confirmation ended as no because no answer came
    pending_consent: _Consent | None = None  # set by a confirmed action that ran in this step
    prior_consent: _Consent | None = None  # the previous step's, the only one that may carry over
    last_readable: Observation | None = None  # the last screen handed to the policy (what a hand-over continues)
    offered_consent: _Consent | None = None  # this step's yes, kept only if its action really ran
    answers: list[Text] = field(default_factory=list)  # what read-only questions found, said to the user
    handed_over_last: bool = False  # the previous step handed a protected screen to the user
    approval: _Approval | None = None  # the user's yes to the purchase under way (one question per purchase)
    approvals: list[dict[str, str]] = field(default_factory=list)  # every approval and what it covered
    pending_events: list[EventRow] = field(default_factory=list)

    # --- plumbing -------------------------------------------------------------------------------------------

    def emit(self, event: Event) -> Event:
        """Queue the event for the history; `flush` writes them, and is called before anything is
        dispatched, asked or waited for, so the record always precedes the action. The conversation rows
        are not the loop's: the assistant (phonebuddy.assistant) writes them from these events."""
        if self.history is not None and self.run_id is not None:
            now = self.history.clock()
            self.pending_events.append(EventRow(self.run_id, self.seq, event.step, str(event.kind), event.payload(), now))
        self.seq += 1
        return event

    def flush(self) -> None:
        if self.history is not None and self.pending_events:
            self.history.record_batch(self.pending_events, [])
        self.pending_events = []

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise _Ended(Outcome.STOPPED, MSG["stopped"])

    def add_step(self, step: Step) -> None:
        self.steps.append(step)

    # --- the run ---------------------------------------------------------------------------------------------

    def run(self) -> Generator[Event, None, EpisodeResult]:
        started = self.clock()
        if self.history is not None:
            self.run_id = self.history.start_run(self.goal, lang=self.config.lang, device=self.info.device,
                                                 policy=self.info.policy)
            if self.info.started is not None:
                self.info.started(self.run_id)
        outcome, summary = Outcome.STOPPED, MSG["stopped"]
        self.before_check()
        try:
            try:
                policy_failures = 0
                while True:
                    self.check_stop()
                    yield from self.history_notices()
                    if self.index >= self.config.step_budget:
                        raise _Ended(Outcome.STEP_BUDGET, MSG["budget"].format(n=self.config.step_budget))
                    policy_failures = yield from self.one_step(policy_failures)
            except _Ended as ended:
                outcome, summary = ended.outcome, ended.summary
            yield from self.history_notices()
            if outcome is not Outcome.FINISHED:
                yield self.emit(Said(self.index, summary, SayPurpose.SUMMARY))
            result = EpisodeResult(goal=self.goal, outcome=outcome, summary=summary, steps=tuple(self.steps),
                                   run_id=self.run_id, elapsed_s=self.clock() - started,
                                   confirmations=self.confirmations, refusals=self.refusals,
                                   handovers=self.handovers, answers=tuple(self.answers),
                                   exchanges=tuple(self.exchanges),
                                   approvals=tuple(self.approvals))
            if self.outcome_check is not None:
                result = replace(result, verification=self.verify(result))
                said = result.verification.summary if result.verification else None
                if said is not None:
                    # The spoken summary says what the check found (verified / not / cannot verify).
                    yield self.emit(Said(self.index, said, SayPurpose.SUMMARY))
                    summary = Text(f"{summary.en} {said.en}", f"{summary.zh}{said.zh}")
                    result = replace(result, summary=summary)
            self.finished = True
            finished = self.emit(Finished(self.index, outcome, summary, result))
            if self.history is not None and self.run_id is not None:
                v = result.verification
                ending = ending_text(result).get(self.config.lang)
                # The run record says how the run ended as the user is told (endings.py), in the run's
                # language; the assistant writes the same ending into the conversation, with the run id.
                self.flush()
                self.history.finish_run(self.run_id, outcome=str(outcome), steps=len(self.steps),
                                        summary=ending,
                                        verification=str(v.status) if v else None,
                                        evidence=v.evidence if v else None)
            yield finished
            return result
        finally:
            if not self.finished and self.history is not None and self.run_id is not None:
                # Closed early by the consumer (or a bug raised): record what we know.
                self.flush()
                self.history.finish_run(self.run_id, outcome=str(Outcome.STOPPED), steps=len(self.steps),
                                        summary=MSG["stopped"].en)

    def history_notices(self) -> Generator[Event, None, None]:
        """A full disk (or a lock held too long) stops the history, not the run: the user hears it once."""
        if self.history is not None:
            for notice in self.history.take_notices():
                yield self.emit(Said(self.index, notice, SayPurpose.NOTICE))

    def before_check(self) -> None:
        """An outcome check that compares before and after reads the phone now (`before_run`, optional)."""
        before_run = getattr(self.outcome_check, "before_run", None)
        if before_run is None:
            return
        try:
            before_run(goal=self.goal, device=self.device)
        except (DeviceError, RuntimeError, ValueError, OSError) as error:
            log.warning("outcome check could not read the phone before the run: %s", error)

    def verify(self, result: EpisodeResult) -> Verification:
        assert self.outcome_check is not None
        try:
            return self.outcome_check(goal=self.goal, result=result, device=self.device)
        except (DeviceError, RuntimeError, ValueError, OSError) as error:
            log.warning("outcome check failed: %s", error)
            return Verification(VerificationStatus.CANNOT_VERIFY, f"the check failed: {error}")

    def one_step(self, policy_failures: int) -> Generator[Event, None, int]:
        step = self.index
        self.prior_consent, self.pending_consent = self.pending_consent, None
        timings: dict[str, float] = {}
        t0 = self.clock()
        obs = yield from self.observe(step)
        timings["observe_s"] = self.clock() - t0
        yield self.emit(Observed(step, obs.foreground, obs.is_secure, obs.is_locked,
                                 len(obs.elements or ()), obs))
        self.check_stop()
        if screen_needs_handover(obs):
            if not obs.is_secure and _is_black(obs.screenshot):
                obs = replace(obs, is_secure=True)  # an all-black capture is a protected screen
            consented = self.prior_consent.category if self.prior_consent is not None else None
            under_way = describe_under_way(self.last_readable, self.context, category=consented) if obs.is_secure else None
            yield from self.handover(step, screen_handover(obs, under_way=under_way), again=self.handed_over_last)
            self.handed_over_last = True
            self.index += 1
            return policy_failures
        self.handed_over_last = False
        self.last_readable = obs

        t0 = self.clock()
        try:
            proposal = self.policy.propose(self.goal, replace(obs, exchanges=tuple(self.exchanges)), tuple(self.steps))
        except PolicyOutputError as error:
            timings["propose_s"] = self.clock() - t0
            policy_failures += 1
            recoverable = policy_failures <= self.config.max_policy_retries
            yield self.emit(ErrorEvent(step, ErrorKind.POLICY_OUTPUT, MSG["bad_reply"], recoverable, str(error)))
            self.add_step(Step(step, Action.wait(0), raw_text=error.raw_text, executed=False,
                               error=f"Your reply could not be used: {error}", foreground=obs.foreground,
                               timings=timings))
            if not recoverable:
                raise _Ended(Outcome.POLICY_FAILED, MSG["policy_failed"]) from None
            return policy_failures
        except PolicyUnavailableError as error:
            said = getattr(error, "message", None)
            text = (Text(MSG["policy_unavailable"].en.format(detail=said.en), MSG["policy_unavailable"].zh.format(detail=said.zh))
                    if isinstance(said, Text) else MSG["policy_unavailable"].format(detail=str(error)))
            yield self.emit(ErrorEvent(step, ErrorKind.POLICY_UNAVAILABLE, text, False, str(error)))
            raise _Ended(Outcome.POLICY_FAILED, text) from None
        timings["propose_s"] = self.clock() - t0
        timings.update({f"policy_{k}": v for k, v in proposal.timings.items()})
        self.check_stop()

        t0 = self.clock()
        action = proposal.action
        decision = self.gate.check(action, obs, self.context, thought=proposal.thought)
        timings["gate_s"] = self.clock() - t0
        shown_action, shown_raw, shown_thought = _redact(proposal, decision, obs)
        yield self.emit(Proposed(step, shown_action, shown_thought, shown_raw, dict(proposal.timings)))
        yield self.emit(Gated(step, shown_action, decision))
        self.check_stop()

        # Loop guard: the same action on the same target again and again.
        signature = action_signature(action, obs)
        screen = _screen_fingerprint(obs)
        if signature == self.repeat_signature:
            self.repeat_total += 1
            self.repeat_count = self.repeat_count + 1 if screen == self.repeat_screen else 1
        else:
            self.repeat_signature, self.repeat_count, self.repeat_total = signature, 1, 1
        self.repeat_screen = screen
        if (self.repeat_count >= self.config.loop_guard_repeats
                or self.repeat_total >= self.config.loop_guard_hard_limit):
            yield from self.loop_guard(step, shown_action, decision, obs, proposal)
            self.index += 1
            return 0

        self.index += 1
        step_id = self.record(step, shown_action, shown_thought, shown_raw, decision, obs, timings)
        base = Step(step, shown_action, thought=shown_thought, raw_text=shown_raw, decision=decision,
                    foreground=obs.foreground, timings=timings)

        if decision.verdict is Verdict.DENY:
            self.refusals += 1
            if Rule(decision.rule) in HANDOVER_RULES:
                yield from self.handover(step, decision)
                self.add_step(replace(base, error=FEEDBACK_HANDOVER))
            else:
                yield self.emit(Said(step, decision.reason, SayPurpose.NOTICE))
                self.add_step(replace(base, error=FEEDBACK_DENIED.format(reason=decision.reason.en)))
            if self.history is not None:
                self.history.update_step(step_id, error="refused")
            return 0

        confirmation: ConfirmAnswer | None = None
        if decision.verdict is Verdict.CONFIRM:
            self.confirmations += 1
            answer, request = yield from self.confirm(step, action, decision, obs, step_id)
            confirmation = answer
            if answer is not ConfirmAnswer.YES:
                self.context = replace(self.context, declined=self.context.declined | {signature})
                yield self.emit(Said(step, MSG["declined"], SayPurpose.NOTICE))
                feedback = FEEDBACK_NO_ANSWER if self.unanswered else FEEDBACK_DECLINED
                self.add_step(replace(base, confirmation=answer, error=feedback))
                self.check_stop()
                return 0
            # Just before dispatch: look again. A changed target or a changed ruling drops the action.
            fresh = yield from self.observe(step)
            again = self.gate.check(action, fresh, replace(self.context, declined=frozenset()), thought=proposal.thought)
            if target_changed(action, obs, fresh) or (again.verdict, again.rule) != (decision.verdict, decision.rule):
                yield self.emit(ErrorEvent(step, ErrorKind.TARGET_CHANGED, MSG["target_changed"], True,
                                           f"{decision.rule} -> {again.rule}"))
                self.add_step(replace(base, confirmation=answer, error=FEEDBACK_CHANGED))
                if self.history is not None:
                    self.history.update_step(step_id, error="target changed; dropped")
                return 0
            self.check_stop()

        base = replace(base, confirmation=confirmation)
        yield from self.dispatch(step, action, base, step_id, timings)
        if confirmation is ConfirmAnswer.YES and self.steps and self.steps[-1].executed and self.steps[-1].index == step:
            self.pending_consent = self.offered_consent
        return 0

    # --- phases ------------------------------------------------------------------------------------------------

    def observe(self, step: int) -> Generator[Event, None, Observation]:
        while True:
            try:
                return self.device.observe()
            except DeviceDisconnected as error:
                yield from self.device_lost(step, error)
            except (DeviceError, OSError) as error:  # a hung screencap, a broken adb socket
                yield from self.device_failed(step, error)

    def record(self, step: int, action: Action, thought: str, raw: str, decision: Decision, obs: Observation,
               timings: dict[str, float]) -> int | None:
        if self.history is None or self.run_id is None:
            return None
        thumb = make_thumbnail(obs.screenshot) if self.config.thumbnails else None
        self.flush()
        return self.history.record_step(self.run_id, step, action=action.to_dict(), thought=thought, raw_text=raw,
                                        verdict=str(decision.verdict), rule=decision.rule, reason=decision.reason,
                                        foreground=obs.foreground, timings=timings, thumbnail=thumb,
                                        width=obs.width, height=obs.height)

    def dispatch(self, step: int, action: Action, base: Step, step_id: int | None,
                 timings: dict[str, float]) -> Generator[Event, None, None]:
        kind = action.kind
        if kind is ActionKind.FINISH:
            text = (action.text or "").strip()
            summary = MSG["done"].format(text=text) if text else MSG["done_plain"]
            yield self.emit(Said(step, summary, SayPurpose.SUMMARY))
            self.add_step(replace(base, executed=True))
            self.mark_executed(step_id, timings)
            raise _Ended(Outcome.FINISHED, summary)
        if kind is ActionKind.OUTPUT:
            text = action.text or ""
            yield self.emit(Said(step, Text(text, text), SayPurpose.OUTPUT))
            self.add_step(replace(base, executed=True))
            self.mark_executed(step_id, timings)
            return
        if kind is ActionKind.CALL_USER:
            question = Text(action.text or "", action.text or "")
            answer = yield from self.ask(step, PauseReason.ASK_USER, question)
            self.add_step(replace(base, executed=True))
            self.mark_executed(step_id, timings)
            if answer is None:
                raise _Ended(Outcome.USER_ENDED, MSG["no_answer"])
            self.keep_exchange(Exchange(question, answer, step))
            return
        if kind is ActionKind.WAIT:
            ms = min(action.duration_ms or 0, self.config.max_wait_ms)
            t0 = self.clock()
            self.flush()
            self.sleep(ms / 1000)
            yield self.emit(Acted(step, action, self.clock() - t0))
            self.add_step(replace(base, executed=True))
            self.mark_executed(step_id, timings)
            return
        t0 = self.clock()
        try:
            self.flush()
            outcome = self.device.act(action)
        except DeviceDisconnected as error:
            yield from self.device_lost(step, error)
            self.add_step(replace(base, error=FEEDBACK_DISCONNECTED))
            return
        except DeviceError as error:
            timings["act_s"] = self.clock() - t0
            yield self.emit(ErrorEvent(step, ErrorKind.ACTION_FAILED,
                                       MSG["action_failed"].format(detail=error.message.en), True, str(error)))
            self.add_step(replace(base, error=FEEDBACK_ACTION_FAILED.format(detail=error.message.en)))
            return
        timings["act_s"] = self.clock() - t0
        yield self.emit(Acted(step, base.action, timings["act_s"]))
        self.mark_executed(step_id, timings)
        executed = replace(base, executed=True)
        only_from = getattr(outcome, "only_from", None)  # a tool's reading, kept to the allowed apps (harness.tools)
        if callable(only_from):
            outcome = only_from(self.context.is_allowed_package)
        said = getattr(outcome, "said", None)  # a tool action's report (harness.tools.ToolResult)
        if isinstance(said, Text):
            is_answer = action.kind is ActionKind.QUERY
            yield self.emit(Said(step, said, SayPurpose.OUTPUT, answer=is_answer))
            executed = replace(executed, result=str(getattr(outcome, "result", "") or said.en))
            if is_answer:
                self.answers.append(said)  # the answer to a question: the ending says it again (endings.py)
        try:
            left = yield from self.check_foreground(step)
        except _Ended:  # the phone failed right after the action: the step was still done (and recorded)
            self.add_step(executed)
            raise
        self.add_step(replace(executed, error=FEEDBACK_LEFT) if left else executed)

    def keep_exchange(self, exchange: Exchange) -> None:
        """The user's answer, kept as typed state (the policy gets it on the next observation) and recorded
        as such in the history (an `exchange` row the training export reads); the goal is left as said."""
        self.exchanges.append(exchange)
        if self.history is not None and self.run_id is not None:
            self.history.audit("exchange", run_id=self.run_id, step=exchange.step, detail=exchange.to_dict())

    def mark_executed(self, step_id: int | None, timings: dict[str, float]) -> None:
        if self.history is not None and step_id is not None:
            self.history.update_step(step_id, executed=True, timings=timings)

    def check_foreground(self, step: int) -> Generator[Event, None, bool]:
        """After an action: outside the allowed apps → pause, back (then home), resume. True if it left."""
        package = yield from self.foreground(step)
        if foreground_allowed(package, self.context):
            return False
        app = self.context.label_of(package)
        message = MSG["left_apps"].format(app=app)
        yield self.emit(Paused(step, PauseReason.LEFT_ALLOWED_APPS, message))
        if self.history is not None:
            self.history.audit("left_allowed_apps", run_id=self.run_id, step=step, detail={"package": package})
        for button in (Button.BACK, Button.HOME):
            try:
                self.flush()
                self.device.act(Action.press(button))
            except DeviceDisconnected as error:
                yield from self.device_lost(step, error)
            except (DeviceError, OSError) as error:
                yield from self.device_failed(step, error)
            package = yield from self.foreground(step)
            if foreground_allowed(package, self.context):
                break
        yield self.emit(Resumed(step, PauseReason.LEFT_ALLOWED_APPS, None))
        return True

    def foreground(self, step: int) -> Generator[Event, None, str]:
        while True:
            try:
                return self.device.foreground()
            except DeviceDisconnected as error:
                yield from self.device_lost(step, error)
            except (DeviceError, OSError) as error:
                yield from self.device_failed(step, error)

    def confirm(self, step: int, action: Action, decision: Decision, obs: Observation,
                step_id: int | None) -> Generator[Event, None, tuple[ConfirmAnswer, ConfirmationRequest]]:
        typed = _recent_typed(self.steps)
        request = build_request(action, decision, obs, app=self.context.label_of(obs.foreground), typed=typed)
        consent = _Consent(request.category, obs.foreground, request.how_much, request.to_whom)
        if self.prior_consent is not None and consent.carries_from(self.prior_consent):
            # The app's own "are you sure?" right after the user said yes to the same thing: no second question.
            if self.history is not None and self.run_id is not None:
                self.flush()
                self.history.record_confirmation(self.run_id, step, step_id, answer=str(ConfirmAnswer.YES),
                                                 by_default=False, question="carried over from the previous step")
            yield self.emit(Said(step, MSG["carried"].format(app=request.app), SayPurpose.NOTICE))
            yield self.emit(ConfirmationAnswered(step, ConfirmAnswer.YES, False, carried=True))
            self.offered_consent = consent
            return ConfirmAnswer.YES, request
        approval = self.approval if self.config.one_question_per_purchase else None
        if approval is not None and approval.covers(request):
            # A later step of the purchase the user already said yes to, same amount and payee: said aloud,
            # recorded with what it was bound to, and not asked again.
            approval.covered += 1
            binding = {**approval.record(), "covered_step": str(step), "covered_app": request.app,
                       "covered_package": obs.foreground, "covered_screen": request.target,
                       "covered_amount": request.how_much, "covered_payee": request.payee}
            self.approvals.append({"kind": "covered", **binding})
            if self.history is not None and self.run_id is not None:
                self.flush()
                self.history.record_confirmation(
                    self.run_id, step, step_id, answer=str(ConfirmAnswer.YES), by_default=False,
                    question=f"covered by the yes at step {approval.step}: {approval.amount} to {approval.payee} "
                             f"({approval.app}, “{approval.screen}”)")
                self.history.audit("purchase_approval_used", run_id=self.run_id, step=step, detail=binding)
            notice = MSG["as_you_said"].format(amount=request.how_much, payee=request.payee)
            if request.address and request.address != approval.address:  # found since the question: said too
                where = MSG["delivered_to"].format(address=request.address)
                notice = Text(f"{notice.en} {where.en}", f"{notice.zh}{where.zh}")
            yield self.emit(Said(step, notice, SayPurpose.NOTICE))
            yield self.emit(ConfirmationAnswered(step, ConfirmAnswer.YES, False, carried=True))
            self.offered_consent = consent
            return ConfirmAnswer.YES, request
        yield self.emit(ConfirmationRequested(step, request.text, request))
        final = ConfirmAnswer.NO
        by_default = True
        self.flush()
        for moment in confirmation_flow(request, self.confirmer, self.config.patience, stopped=self.stop.is_set):
            if moment.say is not None:
                yield self.emit(Said(step, moment.say, SayPurpose.REMINDER))
                self.flush()
            if moment.final is not None:
                final, by_default = moment.final, moment.by_default
        if self.history is not None and self.run_id is not None:
            self.flush()
            self.history.record_confirmation(self.run_id, step, step_id, answer=str(final), by_default=by_default,
                                             question=request.spoken("en"))
        yield self.emit(ConfirmationAnswered(step, final, by_default))
        self.unanswered = by_default and final is not ConfirmAnswer.YES
        self.offered_consent = consent if final is ConfirmAnswer.YES else None
        if request.category in PURCHASE_CATEGORIES:
            self.approval = None  # a new question about money: only its own answer counts from here on
            if final is ConfirmAnswer.YES and _money(request.how_much) is not None and request.payee:
                self.approval = _Approval(step, request.how_much, request.payee, request.item, request.address,
                                          request.app, obs.foreground, request.target)
                self.approvals.append({"kind": "approved", **self.approval.record()})
                if self.history is not None and self.run_id is not None:
                    self.history.audit("purchase_approval", run_id=self.run_id, step=step,
                                       detail=self.approval.record())
        return final, request

    def ask(self, step: int, reason: PauseReason, question: Text) -> Generator[Event, None, str | None]:
        """Pause, put a question to the user, resume with the answer (None: no answer or stop)."""
        yield self.emit(Paused(step, reason, question))
        answer = None
        if self.user is not None and not self.stop.is_set():
            self.flush()
            answer = self.user.ask_user(question, timeout_s=self.config.user_timeout_s)
        if answer is not None and parse_meta(answer) is MetaCommand.STOP:
            self.stop.set()
        self.check_stop()
        if answer is not None and not answer.strip():
            answer = None
        yield self.emit(Resumed(step, reason, answer))
        return answer

    def handover(self, step: int, decision: Decision, *, again: bool = False) -> Generator[Event, None, None]:
        """The user does this part (a protected screen, a PIN, unlocking). The question says how to answer;
        "done" (好了, 完成, or anything but no) resumes: the next step looks at the screen again, and asks
        again if it is still protected. No ends the run here; stop (Esc) stops it."""
        self.handovers += 1
        parts = ([MSG["still_protected"]] if again else []) + [decision.reason, MSG["handover_done"]]
        question = Text(" ".join(p.en for p in parts), "".join(p.zh for p in parts))
        answer = yield from self.ask(step, PauseReason.HANDOVER, question)
        if answer is None:
            raise _Ended(Outcome.USER_ENDED, MSG["no_answer"])
        if parse_meta(answer) is MetaCommand.NO:
            raise _Ended(Outcome.USER_ENDED, MSG["user_ended"])
        if self.history is not None:
            self.history.audit("handover", run_id=self.run_id, step=step, detail={"rule": decision.rule})
        if self.handovers > self.config.max_handovers:
            raise _Ended(Outcome.USER_ENDED, MSG["user_ended"])

    def loop_guard(self, step: int, action: Action, decision: Decision, obs: Observation,
                   proposal: Proposal) -> Generator[Event, None, None]:
        question = MSG["loop_guard"].format(n=self.repeat_total)
        answer = yield from self.ask(step, PauseReason.LOOP_GUARD, question)
        self.repeat_signature, self.repeat_count, self.repeat_total = "", 0, 0
        self.add_step(Step(step, action, thought=proposal.thought, raw_text="", decision=decision, executed=False,
                           error="This action was repeated too often and was not done again.",
                           foreground=obs.foreground))
        if answer is None or parse_meta(answer) is MetaCommand.NO:
            raise _Ended(Outcome.STUCK, MSG["stuck"])
        self.keep_exchange(Exchange(question, answer, step))

    def device_lost(self, step: int, error: DeviceError) -> Generator[Event, None, None]:
        log.warning("device lost: %s", error)
        yield self.emit(Paused(step, PauseReason.DEVICE_LOST, MSG["device_lost"]))
        for attempt in range(self.config.reconnect_attempts):
            self.check_stop()
            self.flush()
            self.sleep(self.config.reconnect_delay_s)
            self.check_stop()
            if self._is_back(attempt):
                yield self.emit(Resumed(step, PauseReason.DEVICE_LOST, None))
                yield self.emit(Said(step, MSG["device_back"], SayPurpose.NOTICE))
                return
        yield self.emit(ErrorEvent(step, ErrorKind.DEVICE, MSG["device_gone"], False, str(error)))
        raise _Ended(Outcome.DEVICE_LOST, MSG["device_gone"])

    def device_failed(self, step: int, error: DeviceError | OSError) -> Generator[Event, None, None]:
        """A device error that waiting will not fix (not a disconnect): a clear ending, the history closed."""
        log.warning("device failed: %s", error)
        if isinstance(error, DeviceError):
            detail = error.message
        else:
            detail = Text(f"{type(error).__name__}: {error}"[:200], f"{type(error).__name__}: {error}"[:200])
        message = Text(MSG["device_failed"].en.format(detail=detail.en.rstrip(".")),
                       MSG["device_failed"].zh.format(detail=detail.zh.rstrip("。.")))
        yield self.emit(ErrorEvent(step, ErrorKind.DEVICE, message, False, str(error)[:500]))
        raise _Ended(Outcome.DEVICE_LOST, message)

    def _is_back(self, attempt: int) -> bool:
        if self.reconnect is not None:
            return bool(self.reconnect(attempt))
        try:
            self.device.foreground()
        except DeviceError:
            return False
        return True


