"""The assistant: one owner for a conversation turn, free of Qt. The window, `phonebuddy run` and any other
front end drive it; they only render what it says and carry out what it decides.

What was heard or typed arrives as a `Heard` (the text, whether the recogniser was unsure, whether it was
typed). `route(heard, state)` sends it, once, to exactly one `Route`:
- COMMAND: a whole-utterance command (stop, repeat, slower, faster, help; assistant_core.session). A spoken
  stop wins in every state, even when the recogniser was unsure of it;
- ANSWER: the answer to what is pending: the confirmation (yes / no / repeat, assistant_core.answers; an
  unclear answer asks again), the loop's free question or hand-over (the words go to the loop, which ends a
  hand-over on done/好了/完成 and on no), a read-back ("Did you say ...?": yes acts on what was read back,
  no asks to hear it again), or another window's question (the setup wizard listening);
- READ_BACK: the recogniser was unsure: say it back and wait for yes or no before anything is done;
- REQUEST: a new request (started through the front end's starter, which assembles it in the front hall,
  phonebuddy.assemble), or "busy" while a run is on;
- NOTHING: nothing was heard (or typed).
Typed text never answers a confirmation (the dialog's own keys and a spoken answer do).

What is pending is typed state, never text glued onto the goal: `Pending` is a `Question` (the loop's free
question or a hand-over, with its PauseReason), a `Confirmation` (the gate's question, with its request) or a
`ReadBack`; `state` is the TurnState derived from them.

The assistant is the one writer of the conversation rows in the history (`conversation`, with the run id
while a run is on): the user's request, what the loop says and asks, the user's answers, the ending
(assistant_core.endings, worked out once), and what happens between runs (a command, a read-back). The loop
writes the run record, steps, events, confirmations and audit rows.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from assistant_core import events as ev
from assistant_core.answers import Heard as Said
from assistant_core.answers import classify_answer, parse_answer
from assistant_core.i18n import Catalog, Text
from assistant_core.session import MetaCommand, parse_meta
from assistant_core.types import ConfirmAnswer

log = logging.getLogger(__name__)

MSG = Catalog(
    "assistant",
    {
        "you_said": "You: {text}",
        "answer": "Your answer: {text}",
        "started": "Working on: {text}",
        "busy": "I am still working. Press Escape to stop first.",
        "empty_request": "Please say or type a request first.",
        "heard_nothing": "I did not hear anything. Please try again.",
        "confirm_not_understood": "I didn't catch a yes or a no. Say yes, no, or repeat.",
        "did_you_say": "I'm not sure I heard you right. Did you say: {text}? Hold Space and say yes or no.",
        "say_it_again": "All right, please say it again.",
        "stopped_by_user": "Stopped. I did nothing more.",
    },
)

COMMANDS = (MetaCommand.STOP, MetaCommand.REPEAT, MetaCommand.SLOWER, MetaCommand.FASTER, MetaCommand.HELP)


class TurnState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    ASKING = "asking"  # the loop's free question (call_user, the loop guard)
    CONFIRMING = "confirming"  # the gate's confirmation is open
    HANDING_OVER = "handing_over"  # the user does a part by hand (a protected screen, a PIN)


class Route(StrEnum):
    NOTHING = "nothing"
    COMMAND = "command"
    ANSWER = "answer"
    READ_BACK = "read_back"
    REQUEST = "request"


@dataclass(frozen=True)
class Heard:
    """What the user said or typed, with the recogniser's confidence (`unsure`: speech.asr's CONFIRM)."""

    text: str
    unsure: bool = False
    typed: bool = False


@dataclass(frozen=True)
class Question:
    """The loop's free question or hand-over, waiting for the user's words."""

    reason: ev.PauseReason
    text: Text = Text("")


@dataclass(frozen=True)
class Confirmation:
    """The gate's question (assistant_core.confirm.ConfirmationRequest), open until answered."""

    request: Any = None


@dataclass(frozen=True)
class ReadBack:
    """A transcript said back ("Did you say ...?"), waiting for yes or no; `elsewhere`: it was for another
    window's question (the setup wizard)."""

    text: str
    elsewhere: bool = False


class Target(StrEnum):
    """Where an ANSWER goes."""

    CONFIRMATION = "confirmation"
    QUESTION = "question"
    READ_BACK = "read_back"
    ELSEWHERE = "elsewhere"


@dataclass(frozen=True)
class Turn:
    """The one route for one Heard, with what it carries."""

    route: Route
    text: str = ""
    command: MetaCommand | None = None
    target: Target | None = None  # ANSWER: to what
    answer: ConfirmAnswer | None = None  # a confirmation's or a read-back's answer (None: not understood)
    busy: bool = False  # REQUEST: a run is on, so it cannot start


def state_of(running: bool, pending: Question | Confirmation | None) -> TurnState:
    if isinstance(pending, Confirmation):
        return TurnState.CONFIRMING
    if isinstance(pending, Question):
        return TurnState.HANDING_OVER if pending.reason is ev.PauseReason.HANDOVER else TurnState.ASKING
    return TurnState.RUNNING if running else TurnState.IDLE


def route(heard: Heard, state: TurnState, *, read_back: ReadBack | None = None, elsewhere: bool = False) -> Turn:
    """Exactly one route for what was heard (see the module docstring). Pure: no side effects."""
    text = heard.text.strip()
    if not text:
        return Turn(Route.NOTHING)
    spoken_stop = classify_answer(text) is Said.STOP
    if read_back is not None:  # this is the answer to "Did you say ...?"
        if spoken_stop:
            return Turn(Route.COMMAND, text, command=MetaCommand.STOP)
        answer = parse_answer(text)
        if answer in (ConfirmAnswer.YES, ConfirmAnswer.NO):
            return Turn(Route.ANSWER, read_back.text, target=Target.READ_BACK, answer=answer)
        return Turn(Route.READ_BACK, read_back.text)  # unclear: asked again
    if state is not TurnState.IDLE and spoken_stop:
        return Turn(Route.COMMAND, text, command=MetaCommand.STOP)  # a stop always wins, even an unsure one
    if heard.unsure and not heard.typed:
        return Turn(Route.READ_BACK, text)
    if elsewhere:
        return Turn(Route.ANSWER, text, target=Target.ELSEWHERE)
    if state is TurnState.CONFIRMING:
        if heard.typed:
            return Turn(Route.REQUEST, text, busy=True)  # typed text never answers the gate's question
        return Turn(Route.ANSWER, text, target=Target.CONFIRMATION, answer=parse_answer(text))
    command = parse_meta(text)
    if command in COMMANDS and (command is MetaCommand.STOP
                                or state not in (TurnState.ASKING, TurnState.HANDING_OVER)):
        return Turn(Route.COMMAND, text, command=command)
    if state in (TurnState.ASKING, TurnState.HANDING_OVER):
        return Turn(Route.ANSWER, text, target=Target.QUESTION)
    return Turn(Route.REQUEST, text, busy=state is not TurnState.IDLE)


class Front(Protocol):
    """What a front end does for the assistant (the window; the command line does the run's part)."""

    def say(self, kind: str | None, text: str, cue: str | None) -> None:
        """Show `text` as a conversation entry of `kind` (request, answer, note, error, result; None: not
        shown) and announce it with `cue` (info, confirm, error...; None: not announced). Never recorded:
        the assistant records."""

    def command(self, command: MetaCommand) -> None:
        """Carry out a command: stop the run, repeat, slower, faster, help."""

    def confirm(self, answer: ConfirmAnswer) -> None:
        """Answer the open confirmation."""

    def reply(self, text: str | None) -> None:
        """Answer the loop's free question or hand-over (None: stopped)."""

    def elsewhere(self, text: str) -> None:
        """Hand the words to another window's question (the setup wizard)."""

    def start(self, goal: str) -> bool:
        """Start the run for `goal` through the starter (False: it cannot start; the front said why)."""


def conversation_line(event: Any, lang: str) -> tuple[str, str] | None:
    """The conversation row (role, text) for one loop event, or None. The closing lines and a question's
    answer are recorded once, as the ending."""
    if isinstance(event, ev.Said) and event.purpose is not ev.SayPurpose.SUMMARY and not event.answer:
        return "assistant", event.text.get(lang)
    if isinstance(event, ev.Paused) and event.reason is not ev.PauseReason.DEVICE_LOST:
        return "assistant", event.message.get(lang)
    if isinstance(event, ev.Resumed) and event.answer:
        return "user", event.answer
    if isinstance(event, ev.Finished) and isinstance(event.result, ev.EpisodeResult):
        from assistant_core.endings import ending_text

        return "assistant", ending_text(event.result).get(lang)
    return None


@dataclass
class Assistant:
    """One conversation: routes what is heard (`hear`), follows the run's events (`on_event`), holds what is
    pending, and writes the conversation rows. Thread-safe where it must be: `run_started` is called on the
    run's thread; everything else on the front end's thread."""

    lang: str = "en"
    front: Front | None = None
    history: Any = None  # assistant_core.history.HistoryStore, or None (nothing kept)
    running: bool = False
    pending: Question | Confirmation | None = None
    read_back: ReadBack | None = None
    run_id: int | None = None
    goal: str = ""
    turns: deque[Turn] = field(default_factory=lambda: deque(maxlen=200))  # the latest routing decisions
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def state(self) -> TurnState:
        return state_of(self.running, self.pending)

    # -- what was heard ----------------------------------------------------------------------------------

    def hear(self, heard: Heard, *, elsewhere: bool = False) -> Turn:
        """Route `heard` once and carry the route out through the front end."""
        read_back, self.read_back = self.read_back, None
        turn = route(heard, self.state, read_back=read_back, elsewhere=elsewhere)
        self.turns.append(turn)
        front = self.front
        assert front is not None, "an assistant needs a front end to act"
        if turn.route is Route.NOTHING:
            front.say(None, MSG.get("heard_nothing" if not heard.typed else "empty_request", self.lang), "error")
        elif turn.route is Route.READ_BACK:
            self.read_back = ReadBack(turn.text, elsewhere=read_back.elsewhere if read_back else elsewhere)
            line = MSG.get("did_you_say", self.lang, text=turn.text)
            if read_back is None:
                self.note("note", line, show=True)  # shown once, said each time it is asked
            front.say(None, line, "confirm")
        elif turn.route is Route.COMMAND:
            self.note("request", MSG.get("you_said", self.lang, text=turn.text), show=True)
            if turn.command is MetaCommand.STOP:
                self.read_back = None
            assert turn.command is not None
            front.command(turn.command)
        elif turn.route is Route.ANSWER:
            self._answer(turn, read_back)
        elif turn.busy:
            front.say(None, MSG.get("busy", self.lang), "info")
        else:
            self.request(turn.text)
        return turn

    def _answer(self, turn: Turn, read_back: ReadBack | None) -> None:
        front = self.front
        assert front is not None
        if turn.target is Target.READ_BACK:
            if turn.answer is ConfirmAnswer.NO:
                front.say(None, MSG.get("say_it_again", self.lang), "info")
                return
            assert read_back is not None  # yes: what was read back is acted on, as if heard clearly
            self.hear(Heard(read_back.text), elsewhere=read_back.elsewhere)
            return
        if turn.target is Target.ELSEWHERE:
            front.elsewhere(turn.text)
        elif turn.target is Target.CONFIRMATION:
            self.note("answer", MSG.get("answer", self.lang, text=turn.text), show=True)
            if turn.answer is None:
                front.say(None, MSG.get("confirm_not_understood", self.lang), "confirm")
            else:
                front.confirm(turn.answer)
        else:  # the loop's question: the loop's Resumed event records the answer
            front.say("answer", MSG.get("answer", self.lang, text=turn.text), None)
            self.pending = None
            front.reply(turn.text)

    def request(self, goal: str) -> bool:
        """Start a run for `goal` (typed or heard clearly); False when it cannot start (said why)."""
        front = self.front
        assert front is not None
        goal = goal.strip()
        if not goal:
            front.say(None, MSG.get("empty_request", self.lang), "error")
            return False
        if self.running:
            front.say(None, MSG.get("busy", self.lang), "info")
            return False
        self.goal, self.run_id, self.pending = goal, None, None
        if not front.start(goal):
            return False
        self.running = True
        return True

    # -- the run ---------------------------------------------------------------------------------------------

    def run_started(self, run_id: int) -> None:
        """The loop opened the run record (called on the run's thread): the request is its first row."""
        with self._lock:
            self.run_id = run_id
        self._write("user", self.goal)

    def on_event(self, event: Any) -> None:
        """Follow one of the run's events: what is pending (a question, a hand-over, a confirmation: the
        loop's own events say when each opens and closes), and its conversation row."""
        if isinstance(event, ev.Paused) and event.reason is not ev.PauseReason.DEVICE_LOST:
            self.pending = Question(event.reason, event.message)
        elif isinstance(event, ev.ConfirmationRequested):
            self.pending = Confirmation(event.request)
        elif isinstance(event, ev.Resumed | ev.ConfirmationAnswered | ev.Finished):
            self.pending = None
        line = conversation_line(event, self.lang)
        if line is not None:
            self._write(*line)

    def ended(self, line: str = "", *, stopped: bool = False, kind: str = "result") -> None:
        """The run is over. `line`: a closing line the loop did not say itself (a failure before it began;
        `stopped`: the user's stop closed it before its ending)."""
        if stopped:
            line = MSG.get("stopped_by_user", self.lang)
        if line:
            self.note(kind, line)
        self.running, self.pending, self.read_back = False, None, None
        with self._lock:
            self.run_id = None

    def note(self, role: str, text: str, *, show: bool = False) -> None:
        """A conversation row from outside the loop's events (with the run id while a run is on)."""
        self._write(role, text)
        if show and self.front is not None:
            self.front.say(role, text, None)

    def _write(self, role: str, text: str) -> None:
        if self.history is None or not text:
            return
        with self._lock:
            run_id = self.run_id
        try:
            self.history.add_message(role, text, lang=self.lang, run_id=run_id)
        except Exception:  # a full disk must not stop the conversation
            log.exception("could not record the conversation")

    def follow(self, episode: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        """The episode's events, each followed (`on_event`) before it is yielded; returns the episode's
        result. Closed or failed, the episode is closed and the run ends as the user's stop; finished, the
        run ends. For a caller that steps the episode itself (GRPO, one tool call at a time) and for `drive`."""
        try:
            while True:
                try:
                    event = next(episode)
                except StopIteration as done:
                    return done.value
                self.on_event(event)
                yield event
        except BaseException:  # closed (GeneratorExit) or failed
            episode.close()
            self.ended(stopped=True)
            raise
        finally:
            if self.running:
                self.ended()

    def drive(self, episode: Generator[Any, Any, Any], on_event: Callable[[Any], None] | None = None) -> Any:
        """Run an episode on this thread (the command line), following each event; returns its result."""
        events = self.follow(episode)
        try:
            while True:
                try:
                    event = next(events)
                except StopIteration as done:
                    return done.value
                if on_event is not None:
                    on_event(event)
        except BaseException:  # the caller's on_event failed, or Ctrl+C between events: a stop
            events.close()
            raise
