"""The session: what the user says is checked for meta-commands before anything reaches the model.

`parse_meta(utterance)` recognises a whole utterance that is a command: stop/停止, repeat/再说一遍,
yes/no/确认/取消/是/不, slower/faster/慢一点/快一点, help/帮助 (with common variants and politeness words
such as "please"/"请"/"吧"). A sentence that merely contains the word ("stop the alarm at seven") is a
request for the model, not a command.

`Session` keeps the state around one user: the last thing said (for "repeat"), the speech rate, the stop
token of the running episode, and a pending confirmation or question. `Session.hear(utterance)` routes
an utterance: a meta-command acts at once (stop sets the run's stop event, yes/no answers the pending
confirmation, ...), anything else is a new goal or the answer to the question the assistant asked.
`Session` is also a `Confirmer` and a `UserChannel` for the loop: the loop thread waits on it while the
UI thread feeds it utterances. Thread-safe; no globals.
"""

from __future__ import annotations

import queue
import re
import threading
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from assistant_core.confirm import ConfirmationRequest
from assistant_core.i18n import Catalog, Text
from assistant_core.types import ConfirmAnswer


class MetaCommand(StrEnum):
    STOP = "stop"
    REPEAT = "repeat"
    YES = "yes"
    NO = "no"
    SLOWER = "slower"
    FASTER = "faster"
    HELP = "help"


_PHRASES: dict[MetaCommand, tuple[str, ...]] = {
    MetaCommand.STOP: ("stop", "stop it", "stop now", "stop that", "halt", "abort", "cancel everything",
                       "停止", "停", "停下", "停下来", "别动", "暂停", "停一下", "不要动", "终止"),
    MetaCommand.REPEAT: ("repeat", "repeat that", "say again", "say that again", "again", "pardon",
                         "what did you say", "再说一遍", "重复", "再说一次", "重复一遍", "你说什么", "没听清"),
    MetaCommand.YES: ("yes", "yeah", "yep", "ok", "okay", "sure", "confirm", "go ahead", "do it", "yes do it",
                      "确认", "是", "是的", "好", "好的", "可以", "对", "行", "确定", "同意", "继续"),
    MetaCommand.NO: ("no", "nope", "cancel", "don't", "do not", "no thanks", "don't do it", "not now",
                     "取消", "不", "不要", "不是", "不行", "别", "否", "算了", "不用了", "拒绝"),
    MetaCommand.SLOWER: ("slower", "slow down", "speak slower", "more slowly", "慢一点", "慢点", "说慢点",
                         "慢一些", "说慢一点"),
    MetaCommand.FASTER: ("faster", "speed up", "speak faster", "quicker", "快一点", "快点", "说快点",
                         "快一些", "说快一点"),
    MetaCommand.HELP: ("help", "what can i say", "what can you do", "帮助", "帮忙", "怎么用", "我能说什么"),
}
_POLITE_RE = re.compile(r"^(?:please|ok|okay|hey|phonebuddy|请|麻烦)\s*|\s*(?:please|now|thanks|thank you|吧|了|啊|呀|一下)$",
                        re.IGNORECASE)
_LOOKUP: dict[str, MetaCommand] = {p: cmd for cmd, phrases in _PHRASES.items() for p in phrases}

MSG = Catalog(
    "session",
    {
        "stopped": ("Stopped.", "已停止。"),
        "nothing_to_stop": ("Nothing is running.", "现在没有正在进行的任务。"),
        "nothing_to_repeat": ("I haven't said anything yet.", "我还没有说过话。"),
        "no_question": ("There is nothing to answer right now.", "现在没有需要回答的问题。"),
        "slower": ("Speaking slower.", "说慢一点。"),
        "faster": ("Speaking faster.", "说快一点。"),
        "rate_limit": ("That is already the limit.", "已经到极限了。"),
        "help": (
            "Tell me what to do on your phone, for example: send a message to Anna. While I work you can say "
            "stop, repeat, slower or faster. When I ask before something important, say yes, no, or repeat.",
            "告诉我要在手机上做什么，比如：给安娜发消息。我操作时你可以说“停止”、“再说一遍”、“慢一点”或“快一点”。"
            "我在重要操作前问你时，请说“确认”、“取消”或“再说一遍”。",
        ),
    },
)


def normalize_utterance(text: str) -> str:
    """Lower-case, full-width to half-width, punctuation and surrounding politeness words removed."""
    text = unicodedata.normalize("NFKC", text).casefold().strip().replace("’", "'").replace("‘", "'")
    text = re.sub(r"[\s\.,!?;:，。！？；：、…“”\"~～]+", " ", text).strip()
    previous = None
    while previous != text:
        previous = text
        text = _POLITE_RE.sub("", text).strip()
    return text


def parse_meta(utterance: str) -> MetaCommand | None:
    """The meta-command this whole utterance is, or None if it is a request for the model."""
    if not utterance or not utterance.strip():
        return None
    raw = unicodedata.normalize("NFKC", utterance).casefold().strip().replace("’", "'")
    raw = re.sub(r"[\s\.,!?;:，。！？；：、…“”\"~～]+", " ", raw).strip()
    if raw in _LOOKUP:
        return _LOOKUP[raw]
    return _LOOKUP.get(normalize_utterance(utterance))


class RouteKind(StrEnum):
    META = "meta"  # a meta-command was handled
    GOAL = "goal"  # a new request for the assistant
    ANSWER = "answer"  # the reply to a question the assistant asked (call_user)


@dataclass(frozen=True)
class Routed:
    """What `Session.hear` did with one utterance. `say` is what to speak back (None: nothing)."""

    kind: RouteKind
    command: MetaCommand | None = None
    text: str = ""
    say: Text | None = None


@dataclass(frozen=True)
class SpeechRate:
    """Speech rate as a multiplier of normal speed, within [minimum, maximum]."""

    value: float = 1.0
    step: float = 0.15
    minimum: float = 0.5
    maximum: float = 2.0

    def slower(self) -> SpeechRate:
        return SpeechRate(max(self.minimum, round(self.value - self.step, 2)), self.step, self.minimum, self.maximum)

    def faster(self) -> SpeechRate:
        return SpeechRate(min(self.maximum, round(self.value + self.step, 2)), self.step, self.minimum, self.maximum)


class Session:
    """One user's conversation state. Feed it utterances from the UI thread with `hear`; hand it to the
    loop as `confirmer=` and `user=` (it implements both protocols) and set `stop_event` per run."""

    def __init__(self, *, lang: str = "en", rate: SpeechRate | None = None):
        self.lang = lang
        self.rate = rate or SpeechRate()
        self.stop_event = threading.Event()
        self.running = False
        self._lock = threading.Lock()
        self._last_said: Text | None = None
        self._answers: queue.Queue[ConfirmAnswer] = queue.Queue()
        self._replies: queue.Queue[str | None] = queue.Queue()
        self._awaiting_confirmation = False
        self._awaiting_reply = False

    # --- what the assistant said, for "repeat" ----------------------------------------------------------

    def said(self, text: Text) -> None:
        with self._lock:
            self._last_said = text

    @property
    def last_said(self) -> Text | None:
        return self._last_said

    def begin_run(self) -> threading.Event:
        """A fresh stop token for a new episode."""
        with self._lock:
            self.stop_event = threading.Event()
            self.running = True
            return self.stop_event

    def end_run(self) -> None:
        with self._lock:
            self.running = False

    @property
    def waiting_for(self) -> str | None:
        """"confirmation", "reply" or None: what the loop is waiting for from the user right now."""
        with self._lock:
            if self._awaiting_confirmation:
                return "confirmation"
            return "reply" if self._awaiting_reply else None

    def wait_until_waiting(self, timeout_s: float = 10.0) -> str | None:
        """Block until the loop waits for an answer (or the timeout); returns what it waits for."""
        deadline = threading.Event()
        for _ in range(int(timeout_s / 0.01) + 1):
            state = self.waiting_for
            if state is not None:
                return state
            deadline.wait(0.01)
        return None

    # --- routing ------------------------------------------------------------------------------------------

    def hear(self, utterance: str) -> Routed:
        """Route one utterance (see the module docstring). Never raises for odd input."""
        command = parse_meta(utterance)
        if command is None:
            with self._lock:
                awaiting_reply = self._awaiting_reply
            if awaiting_reply:
                self._replies.put(utterance.strip())
                return Routed(RouteKind.ANSWER, text=utterance.strip())
            return Routed(RouteKind.GOAL, text=utterance.strip())
        return self._meta(command)

    def _meta(self, command: MetaCommand) -> Routed:
        with self._lock:
            confirming, replying = self._awaiting_confirmation, self._awaiting_reply
        if command is MetaCommand.STOP:
            was_running = self.running
            self.stop_event.set()
            if confirming:
                self._answers.put(ConfirmAnswer.NO)
            if replying:
                self._replies.put(None)
            return Routed(RouteKind.META, command, say=MSG["stopped"] if was_running else MSG["nothing_to_stop"])
        if command in (MetaCommand.YES, MetaCommand.NO):
            if confirming:
                self._answers.put(ConfirmAnswer.YES if command is MetaCommand.YES else ConfirmAnswer.NO)
                return Routed(RouteKind.META, command)
            if replying:
                # A yes/no is a fine answer to an open question too.
                self._replies.put(str(command))
                return Routed(RouteKind.ANSWER, command, text=str(command))
            return Routed(RouteKind.META, command, say=MSG["no_question"])
        if command is MetaCommand.REPEAT:
            if confirming:
                self._answers.put(ConfirmAnswer.REPEAT)
                return Routed(RouteKind.META, command)
            return Routed(RouteKind.META, command, say=self._last_said or MSG["nothing_to_repeat"])
        if command in (MetaCommand.SLOWER, MetaCommand.FASTER):
            before = self.rate
            self.rate = before.slower() if command is MetaCommand.SLOWER else before.faster()
            if self.rate.value == before.value:
                return Routed(RouteKind.META, command, say=MSG["rate_limit"])
            return Routed(RouteKind.META, command, say=MSG["slower" if command is MetaCommand.SLOWER else "faster"])
        return Routed(RouteKind.META, command, say=MSG["help"])

    # --- the loop's side: Confirmer and UserChannel ----------------------------------------------------------

    def ask(self, request: ConfirmationRequest, *, timeout_s: float | None) -> ConfirmAnswer | None:
        """Confirmer: wait for yes/no/repeat routed by `hear`; None after `timeout_s` of silence."""
        with self._lock:
            self._awaiting_confirmation = True
            self._last_said = request.text
        try:
            return self._answers.get(timeout=timeout_s)
        except queue.Empty:
            return None
        finally:
            with self._lock:
                self._awaiting_confirmation = False

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        """UserChannel: wait for the user's free answer to a question; None on stop or silence."""
        with self._lock:
            self._awaiting_reply = True
            self._last_said = question
        try:
            return self._replies.get(timeout=timeout_s)
        except queue.Empty:
            return None
        finally:
            with self._lock:
                self._awaiting_reply = False
