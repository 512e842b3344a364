"""How the agent loop's events (assistant_core.events) look and sound in the window.

`present(event, lang)` is the only place that knows the loop's event types. It returns a `Presented`:
the conversation entry (None: no entry), whether and how to announce it, and a phone frame to show
when the event carries one. Unknown events are shown as their text and logged, never dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.announce import Cue
from app.conversation import EntryKind
from app.strings import tr
from assistant_core import events as ev
from assistant_core.i18n import Text
from assistant_core.types import ActionKind, Verdict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Presented:
    kind: EntryKind | None
    text: str = ""
    cue: Cue = Cue.INFO
    speak: bool = True
    refresh_mirror: bool = False
    frame: Any = None  # a PIL image from the loop's observation
    closes_question: bool = False  # the pending confirmation is over (answered or given up)


def _t(value: Any, lang: str) -> str:
    if isinstance(value, Text):
        return value.get(lang)
    return "" if value is None else str(value)


def _step_text(event: ev.Proposed, lang: str) -> str:
    what = event.thought.strip() if event.thought else ""
    if not what and event.action is not None:
        what = str(event.action.kind)
    return tr("step", lang, n=event.step + 1, what=what)


_OUTCOME_CUES = {ev.Outcome.FINISHED: Cue.SUCCESS, ev.Outcome.STOPPED: Cue.INFO}


def present(event: Any, lang: str) -> Presented | None:
    """The conversation entry and announcement for one loop event (None: nothing at all)."""
    if isinstance(event, Presented):
        return event
    if isinstance(event, ev.Observed):
        shot = event.observation.screenshot if event.observation is not None else None
        return Presented(None, speak=False, frame=shot, refresh_mirror=shot is None)
    if isinstance(event, ev.Proposed):
        if event.action is not None and event.action.kind is ActionKind.FINISH:
            # The ending (Finished) says what happened; a "The task is done." step before it would claim
            # it was done even after the user said no or a rule refused.
            return None
        return Presented(EntryKind.STEP, _step_text(event, lang), Cue.INFO)
    if isinstance(event, ev.Gated):
        if event.decision is not None and event.decision.verdict is Verdict.DENY:
            return Presented(EntryKind.BLOCKED, tr("blocked", lang, text=_t(event.decision.reason, lang)), Cue.ERROR)
        return None
    if isinstance(event, ev.ConfirmationRequested):
        # The dialog reads the question aloud itself.
        return Presented(EntryKind.QUESTION, tr("question", lang, text=_t(event.question, lang)), Cue.CONFIRM, speak=False)
    if isinstance(event, ev.ConfirmationAnswered):
        key = "confirm_said_yes" if event.answer.value == "yes" else ("confirm_timeout" if event.by_default else "confirm_said_no")
        return Presented(EntryKind.ANSWER, tr("answer", lang, text=tr(key, lang)), speak=event.by_default,
                         closes_question=True)
    if isinstance(event, ev.Acted):
        return Presented(None, speak=False, refresh_mirror=True)
    if isinstance(event, ev.Said):
        if event.purpose is ev.SayPurpose.SUMMARY:
            return None  # the Finished event says it
        if event.answer:
            # A question's answer is shown and spoken once, as the ending (assistant_core.endings: ANSWERED),
            # so it is neither cut off by the ending nor said twice, and F3 repeats it.
            return None
        cue = Cue.CONFIRM if event.purpose is ev.SayPurpose.REMINDER else Cue.INFO
        return Presented(EntryKind.ASSISTANT, tr("assistant", lang, text=_t(event.text, lang)), cue)
    if isinstance(event, ev.Paused):
        text = _t(event.message, lang)
        if event.reason is ev.PauseReason.HANDOVER:  # the window's own way to say "done": F10 (app.pin_pad)
            text = f"{text} {tr('handover_key', lang)}" if lang != "zh" else f"{text}{tr('handover_key', lang)}"
        return Presented(EntryKind.QUESTION, tr("question", lang, text=text), Cue.CONFIRM, refresh_mirror=True)
    if isinstance(event, ev.Resumed):
        return None
    if isinstance(event, ev.ErrorEvent):
        return Presented(EntryKind.ERROR, tr("error", lang, text=_error_words(event, lang)), Cue.ERROR,
                         speak=not event.recoverable or event.error is not ev.ErrorKind.POLICY_OUTPUT)
    if isinstance(event, ev.Finished):
        if isinstance(event.result, ev.EpisodeResult):
            return _ending(event.result, lang)
        cue = _OUTCOME_CUES.get(event.outcome, Cue.ERROR)
        return Presented(EntryKind.RESULT, _t(event.summary, lang), cue, refresh_mirror=True)
    for attr in ("message", "text", "summary"):
        value = getattr(event, attr, None)
        if value:
            log.info("presenting unknown event type %s by its %s", type(event).__name__, attr)
            return Presented(EntryKind.NOTE, _t(value, lang))
    log.info("unknown loop event %r", event)
    return Presented(EntryKind.NOTE, str(event), speak=False)


def _error_words(event: ev.ErrorEvent, lang: str) -> str:
    """The loop's message, unless it carries an exception's own text (a class name, errno, a path): then
    plain words for that kind of error. Nothing spoken names an exception."""
    from app.failures import FAILURES, MODEL_UNAVAILABLE, STEP_FAILED, speakable

    text = _t(event.message, lang)
    if speakable(text):
        return text
    log.info("error said in plain words instead of: %s", text)
    plain = {ev.ErrorKind.POLICY_UNAVAILABLE: MODEL_UNAVAILABLE, ev.ErrorKind.ACTION_FAILED: STEP_FAILED}
    return plain.get(event.error, FAILURES["internal"]).get(lang)


def present_result(result: Any, lang: str) -> Presented:
    """The closing entry for the episode's return value (used when no Finished event was seen)."""
    if isinstance(result, ev.EpisodeResult):
        return _ending(result, lang)
    return Presented(EntryKind.RESULT, _t(result, lang), Cue.INFO, refresh_mirror=True)


def _ending(result: ev.EpisodeResult, lang: str) -> Presented:
    """The run's closing sentence (assistant_core.endings): each way of ending says what happened."""
    from assistant_core.endings import SUCCESSFUL, Ending, ending_of, ending_text

    ending = ending_of(result)
    cue = (Cue.SUCCESS if ending in SUCCESSFUL
           else Cue.INFO if ending in (Ending.STOPPED, Ending.DECLINED, Ending.NO_ANSWER) else Cue.ERROR)
    return Presented(EntryKind.RESULT, ending_text(result).get(lang), cue, refresh_mirror=True)
