"""How a run ended, in one sentence a person can trust: `ending_of(result)` names the kind of ending and
`ending_text(result)` says it in English and Chinese.

Each kind has its own sentence and none of them starts like another:
- DONE_CHECKED: the model finished and the phone's own state shows it (harness.verify said VERIFIED, or
  ALREADY: it was already as asked before the run and still is, "Wi-Fi was already on; I left it on");
- DONE_UNCHECKED: the model finished but nothing on the phone can confirm it;
- ANSWERED: the request was a question and it was answered: the ending is the answer itself ("The battery
  is at 88%, charging."), so the last thing said (and what F3 repeats) is the answer, not "Done";
- DECLINED: not done, because the user said no to a step it needed;
- NO_ANSWER: not done, because a question went unanswered (no answer means no);
- REFUSED_CAREGIVER / REFUSED_SAFETY: not done, because the caregiver's allowed apps or a fixed safety
  rule refused a step it needed;
- STOPPED: the user stopped it;
- NOT_FINISHED: it could not finish (the check found it not done, the step budget ran out, the model or
  the phone failed, the same thing kept failing).

A refusal or a no only explains the ending when the phone does not show the request done: a user may
say no to one way and yes to the next, and a checked result is the truth.
"""

from __future__ import annotations

import re
from enum import StrEnum

from assistant_core.events import EpisodeResult, Outcome, VerificationStatus
from assistant_core.i18n import Catalog, Text
from assistant_core.types import ActionKind, ConfirmAnswer, Verdict

# The loop tells the model this when a question went unanswered (assistant_core.loop uses it too).
FEEDBACK_NO_ANSWER = "The user did not answer, so the action was not done. Do not try it again; choose another step or finish."

SAY = Catalog(
    "endings",
    {
        "done_checked": "Done, and checked on the phone.",
        "done_short": "Done.",  # followed by what the check found on the phone
        "done_unchecked": "Done, as far as I can tell: I could not check it on the phone.",
        "declined": "Not done, because you said no.",
        "no_answer": "Not done: you did not answer, and no answer means no.",
        "refused_caregiver": "Not done: your caregiver's settings do not allow it.",
        "refused_safety": "Not done: a safety rule does not allow it.",
        "stopped": "Stopped. I did nothing more.",
        "not_finished": "I could not finish it.",
        "answered": "I looked, but the phone gave me nothing to tell you.",
    },
)
# The whole ending when the request was not to do something ("No, leave it", "不要给陈爱丽打电话"): nothing was
# done because nothing was asked, so no "Done" and no check is said before it (harness.fastpath finishes with it).
WONT = Text("OK, I won't.")


class Ending(StrEnum):
    DONE_CHECKED = "done_checked"
    DONE_UNCHECKED = "done_unchecked"
    ANSWERED = "answered"
    DECLINED = "declined"
    NO_ANSWER = "no_answer"
    REFUSED_CAREGIVER = "refused_caregiver"
    REFUSED_SAFETY = "refused_safety"
    STOPPED = "stopped"
    NOT_FINISHED = "not_finished"


SUCCESSFUL = frozenset({Ending.DONE_CHECKED, Ending.DONE_UNCHECKED, Ending.ANSWERED})
CAREGIVER_RULES = frozenset({"deny.app_not_allowed", "deny.outside_allowed"})
_NOT_A_REFUSAL = frozenset({"deny.user_declined"})  # the user's own earlier no, not a rule


def _refusal(result: EpisodeResult) -> Ending | None:
    for step in result.steps:
        decision = step.decision
        if decision is None or decision.verdict is not Verdict.DENY or decision.rule.startswith("handover."):
            continue
        if decision.rule in _NOT_A_REFUSAL:
            return Ending.DECLINED
        return Ending.REFUSED_CAREGIVER if decision.rule in CAREGIVER_RULES else Ending.REFUSED_SAFETY
    return None


def _declined(result: EpisodeResult) -> Ending | None:
    for step in result.steps:
        if step.confirmation is ConfirmAnswer.NO and not step.executed:
            return Ending.NO_ANSWER if step.error == FEEDBACK_NO_ANSWER else Ending.DECLINED
    return None


def ending_of(result: EpisodeResult) -> Ending:
    """The kind of ending (see the module docstring for the order of precedence)."""
    if result.outcome is Outcome.STOPPED:
        return Ending.STOPPED
    status = result.verification.status if result.verification is not None else None
    if result.outcome is Outcome.FINISHED and status in (VerificationStatus.VERIFIED, VerificationStatus.ALREADY):
        return Ending.DONE_CHECKED
    declined = _declined(result)
    if (result.outcome is Outcome.FINISHED and result.answers and declined is None
            and status is not VerificationStatus.NOT_VERIFIED):
        return Ending.ANSWERED  # a question, answered: nothing on the phone was meant to change
    why_not = declined or _refusal(result)
    if why_not is not None:
        return why_not
    if result.outcome is Outcome.FINISHED and status is not VerificationStatus.NOT_VERIFIED:
        return Ending.DONE_UNCHECKED
    return Ending.NOT_FINISHED


_DONE_WORDS = re.compile(r"^\s*(?:done|finished|ok(?:ay)?|完成了?|好了|已完成)\s*[.!。！,，:：]*\s*", re.IGNORECASE)


def _finish_text(result: EpisodeResult) -> str:
    """The words of the executed finish, as the model (or the fast path) wrote them."""
    for step in reversed(result.steps):
        if step.action.kind is ActionKind.FINISH and step.executed:
            return (step.action.text or "").strip()
    return ""


def _model_words(result: EpisodeResult) -> str:
    """What the model said when it finished, less a bare "Done." that would only echo our own sentence."""
    return _DONE_WORDS.sub("", _finish_text(result), count=1).strip()


def _loop_reason(result: EpisodeResult) -> Text | None:
    """The loop's own sentence for an unfinished run (step budget, model failure, phone lost...)."""
    if result.outcome in (Outcome.FINISHED, Outcome.STOPPED):
        return None
    return result.summary


def ending_text(result: EpisodeResult) -> Text:
    """The closing sentence(s) for the run, both languages: the ending, then what explains it."""
    ending = ending_of(result)
    verification = result.verification
    if ending in SUCCESSFUL and _finish_text(result) in (WONT.en, WONT.zh):
        return WONT  # only the truthful line: "OK, I won't.", never "Done. ... I won't."
    if ending is Ending.ANSWERED:
        return _answer_text(result)
    checked_says_so = ending is Ending.DONE_CHECKED and verification is not None and verification.summary is not None
    parts: list[Text] = [SAY["done_short"] if checked_says_so else SAY[str(ending)]]
    if ending is not Ending.STOPPED:
        parts.extend(_unique(result.answers))  # a question answered on the way is said again at the end
    if ending in SUCCESSFUL:
        words = _model_words(result)
        if words:
            parts.append(Text(words, words))
    if ending in (Ending.REFUSED_CAREGIVER, Ending.REFUSED_SAFETY):
        for step in result.steps:
            if step.decision is not None and step.decision.verdict is Verdict.DENY and isinstance(step.decision.reason, Text):
                parts.append(step.decision.reason)
                break
    reason = _loop_reason(result) if ending is Ending.NOT_FINISHED else None
    if reason is not None:
        parts.append(reason)  # the loop has already added what the check found to its own summary
    elif ending is not Ending.STOPPED and verification is not None and verification.summary is not None:
        parts.append(verification.summary)
    en = " ".join(p.en.strip() for p in parts if p.en.strip())
    zh = "".join(p.zh.strip() for p in parts if p.zh.strip())
    return Text(en, zh)


def _unique(texts: tuple[Text, ...]) -> list[Text]:
    seen: set[str] = set()
    out: list[Text] = []
    for text in texts:
        if text.en.strip() and text.en not in seen:
            seen.add(text.en)
            out.append(text)
    return out


def answer_text(result: EpisodeResult) -> Text | None:
    """The answers a question found (None when the run answered nothing)."""
    answers = _unique(result.answers)
    if not answers:
        return None
    return Text(" ".join(a.en.strip() for a in answers), "".join(a.zh.strip() for a in answers))


def _answer_text(result: EpisodeResult) -> Text:
    """A question's ending is its answer, and what the model added when it finished (never "Done", and
    never "I could not check it": a question changes nothing on the phone)."""
    parts = [answer_text(result) or SAY["answered"]]
    words = _model_words(result)
    if words and words not in parts[0].en and words not in parts[0].zh:
        parts.append(Text(words, words))
    return Text(" ".join(p.en.strip() for p in parts), "".join(p.zh.strip() for p in parts))
