"""A front end with no window, for a request driven on the caller's thread: `phonebuddy run`, evaluation
(training.evaluate) and the gate's measurements (phonebuddy.safety_eval). Free of Qt.

The assistant (phonebuddy.assistant) owns the turn here as in the window: the request is heard
(`Assistant.hear`), and so is every answer. When the loop asks, a `Listener` (the console, a fixed
--confirm, a simulated phone owner) says what the user says; the assistant hears it (`route()`: an ANSWER
to the confirmation or to the question, or a stop) and hands what it decided to the front end
(`Front.confirm`, `Front.reply`, `Front.command`), and the `AnswerBridge` gives that to the loop as its
confirmer's and user channel's answer. A listener may instead press a key (a ConfirmAnswer: `phonebuddy
run --confirm yes|no`), which reaches the loop as the window's dialog buttons do, with no words to route.
The loop asks only after it has yielded the event that opens the question (ConfirmationRequested, Paused),
which `Assistant.drive` has already followed, so the assistant knows what is pending when it hears the
answer. A spoken stop sets the front end's `stop`, which the episode must be given.

    front = HeadlessFront(lambda f: parts.episode(goal, ..., confirmer=f.bridge, user=f.bridge, stop=f.stop,
                                                  info=RunInfo(..., started=f.assistant.run_started)),
                          listener)
    assistant = front.attach(Assistant(lang=lang, history=history))
    turn, result = front.run(goal, on_event)

GRPO's environments (training.rl_env), whose trainer steps the episode one tool call at a time, hear the
request with `begin` instead and step the events it hands back.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Generator
from typing import Any, Protocol

from assistant_core.answers import NO_PHRASES, YES_PHRASES
from assistant_core.i18n import Text
from assistant_core.session import MetaCommand
from assistant_core.types import ConfirmAnswer
from phonebuddy.assistant import Assistant, Heard, Route, Turn


class Listener(Protocol):
    """What the user says when the loop asks (None: nothing, as a user who does not answer)."""

    def confirmation(self, request: Any) -> str | ConfirmAnswer | None:
        """The words said to the gate's question (assistant_core.confirm.ConfirmationRequest), heard by the
        assistant; or a ConfirmAnswer, a key pressed (as the window's dialog buttons: no words to route)."""

    def question(self, question: Text) -> str | None:
        """The words said to the loop's free question or hand-over."""


def spoken(answer: ConfirmAnswer | None, lang: str) -> str | None:
    """The plainest spoken yes or no in `lang` (the first of assistant_core.answers' phrases, so the
    recogniser's own vocabulary): "yes" / "no", "是" / "不". None stays silent; REPEAT is "repeat"."""
    if answer is None:
        return None
    if answer is ConfirmAnswer.REPEAT:
        return "repeat"
    phrases = YES_PHRASES if answer is ConfirmAnswer.YES else NO_PHRASES
    return (phrases.get(lang) or phrases["en"])[0]


class SimulatedListener:
    """A simulated phone owner: says `answer` (yes, no, or nothing) to every confirmation, in `lang`, and
    answers questions with `user` (an assistant_core.loop.UserChannel: a scripted user, or
    harness.phoneworld's SimulatedUser, who also takes the phone at a hand-over)."""

    def __init__(self, answer: ConfirmAnswer | None, user: Any = None, lang: str = "en"):
        self.answer, self.user, self.lang = answer, user, lang

    def confirmation(self, request: Any) -> str | None:
        return spoken(self.answer, self.lang)

    def question(self, question: Text) -> str | None:
        return self.user.ask_user(question) if self.user is not None else None


class AnswerBridge:
    """The loop's confirmer (assistant_core.confirm.Confirmer) and user channel (assistant_core.loop's
    UserChannel) for a run on this thread: each question is put to the listener, its words are heard by
    the assistant, and what the assistant hands back (`confirmed`, `replied`) is the answer. An answer
    the assistant did not hand on (unclear, a stop) is no answer (None): the loop reminds, or stops."""

    def __init__(self, front: HeadlessFront):
        self.front = front
        self._confirm: list[ConfirmAnswer] = []
        self._reply: list[str | None] = []

    def confirmed(self, answer: ConfirmAnswer) -> None:
        self._confirm.append(answer)

    def replied(self, text: str | None) -> None:
        self._reply.append(text)

    def ask(self, request: Any, *, timeout_s: float | None = None) -> ConfirmAnswer | None:
        self._confirm.clear()
        said = self.front.listener.confirmation(request) if self.front.listener is not None else None
        if isinstance(said, ConfirmAnswer):
            return said  # a key pressed, as the dialog's buttons are: the answer itself
        if said is not None:
            self.front.hear(said)
        return self._confirm.pop(0) if self._confirm else None

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        self._reply.clear()
        words = self.front.listener.question(question) if self.front.listener is not None else None
        if words is None:
            return None
        self.front.hear(words)
        return self._reply.pop(0) if self._reply else None


class HeadlessFront:
    """The assistant's front end (phonebuddy.assistant.Front) without a window: what the assistant says goes
    to `say` (by default: printed to stderr when it is announced); a request it decides to start becomes
    the episode `make_episode(front)` builds, driven by `Assistant.drive` in `run`; a stop sets `stop`;
    confirm and reply go to the loop through the `bridge`."""

    def __init__(self, make_episode: Callable[[HeadlessFront], Generator[Any, Any, Any]],
                 listener: Listener | None = None, *, stop: threading.Event | None = None,
                 say: Callable[[str | None, str, str | None], None] | None = None):
        self.make_episode = make_episode
        self.listener = listener
        self.stop = stop if stop is not None else threading.Event()
        self._say = say
        self.bridge = AnswerBridge(self)
        self.assistant: Assistant | None = None
        self.episode: Generator[Any, Any, Any] | None = None

    def attach(self, assistant: Assistant) -> Assistant:
        """Make this the assistant's front end (and return the assistant)."""
        assistant.front, self.assistant = self, assistant
        return assistant

    def hear(self, words: str) -> Turn:
        """The user said `words` (spoken, heard clearly): the assistant routes them."""
        assert self.assistant is not None, "attach an assistant first"
        return self.assistant.hear(Heard(words))

    def run(self, goal: str, on_event: Callable[[Any], None] | None = None) -> tuple[Turn, Any]:
        """Hear `goal` as typed text; when it is a request, drive its episode to the end: (the turn, the
        loop's EpisodeResult, or None when nothing was started)."""
        assert self.assistant is not None, "attach an assistant first"
        turn = self.assistant.hear(Heard(goal, typed=True))
        if turn.route is not Route.REQUEST or self.episode is None:
            return turn, None
        return turn, self.assistant.drive(self.episode, on_event)

    def begin(self, goal: str) -> tuple[Turn, Generator[Any, Any, Any] | None]:
        """Hear `goal` as typed text, as `run` does, for a caller that steps the episode itself (GRPO, whose
        trainer advances it one tool call at a time): (the turn, the episode's events, each followed by the
        assistant before it is yielded, as `Assistant.drive` follows them; None when nothing was started).
        The events' generator returns the loop's EpisodeResult; closing it closes the episode, as a stop."""
        assert self.assistant is not None, "attach an assistant first"
        turn = self.assistant.hear(Heard(goal, typed=True))
        if turn.route is not Route.REQUEST or self.episode is None:
            return turn, None
        return turn, self.assistant.follow(self.episode)

    # -- phonebuddy.assistant.Front --------------------------------------------------------------------------

    def say(self, kind: str | None, text: str, cue: str | None) -> None:
        if self._say is not None:
            self._say(kind, text, cue)
        elif cue:
            print(text, file=sys.stderr, flush=True)

    def command(self, command: MetaCommand) -> None:
        if command is MetaCommand.STOP:
            self.stop.set()  # the loop stops at its next check (an open question counts as no)
        # repeat, slower, faster, help: nothing to repeat or pace without a voice

    def confirm(self, answer: ConfirmAnswer) -> None:
        self.bridge.confirmed(answer)

    def reply(self, text: str | None) -> None:
        self.bridge.replied(text)

    def elsewhere(self, text: str) -> None:
        pass  # no other window listens

    def start(self, goal: str) -> bool:
        self.episode = self.make_episode(self)
        return True


def simulated_front(make_episode: Callable[[HeadlessFront], Generator[Any, Any, Any]], *,
                    answer: ConfirmAnswer | None, user: Any, lang: str, history: Any = None,
                    assistant: Assistant | None = None) -> HeadlessFront:
    """A simulated phone owner as the assistant's front end (evaluation, safety_eval): `answer` said to every
    confirmation in `lang` (None: nothing said), `user` answering the loop's questions (and taking the phone
    at a hand-over); nothing is shown or spoken. `assistant` (default: a new one) is attached, in `lang`,
    writing to `history` when one is given."""
    front = HeadlessFront(make_episode, SimulatedListener(answer, user, lang), say=lambda kind, text, cue: None)
    assistant = front.attach(assistant if assistant is not None else Assistant())
    assistant.lang = lang
    if history is not None:
        assistant.history = history
    return front
