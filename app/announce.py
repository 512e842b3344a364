"""The one `announce()` seam: every state change a user must know about goes through `Announcer`.

`Announcer.announce(text)` does three things, always together:
1. speaks the text with our own TTS (an injected speaker with `say/stop/repeat_last`, `speech.Speaker`);
2. raises a Qt accessibility announcement, so a running screen reader (NVDA, Orca, VoiceOver) reads it
   too: `QAccessibleAnnouncementEvent` on a live-region label (Qt 6.8+), and the label's text changes
   (a `NameChanged` event) for screen readers that only follow live regions;
3. plays an earcon for the kind of event (listening, working, confirm, success, error).
It also keeps the last utterance for "repeat last", and a bounded log for tests and review.

With a screen reader running, a message must reach the ear once: `channel` (app.screen_reader's
SpeechChannel) picks our voice only ("own_voice": no announcement events, the live region's text still
changes for sighted helpers), the screen reader only ("screen_reader": no speech of our own), or both
("both", for people without a screen reader).

The speaker and earcon player are injected; with none (no voice installed) the announcement still
reaches screen readers and the log, and `speech_available` says so.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QAccessibleEvent
from PySide6.QtWidgets import QLabel

log = logging.getLogger(__name__)


class Cue(StrEnum):
    """Why something is announced; picks the earcon and the screen-reader politeness."""

    INFO = "info"
    LISTENING = "listening"
    WORKING = "working"
    CONFIRM = "confirm"
    SUCCESS = "success"
    ERROR = "error"


@runtime_checkable
class SpeakerLike(Protocol):
    """What the announcer needs from a TTS engine (speech.Speaker provides it)."""

    def say(self, text: str) -> object: ...

    def stop(self) -> object: ...


@runtime_checkable
class EarconPlayerLike(Protocol):
    def play(self, cue: str) -> object: ...


@dataclass(frozen=True)
class Announcement:
    text: str
    cue: Cue
    spoken: bool
    to_screen_reader: bool = True  # an accessibility announcement event was raised


MIN_RATE, MAX_RATE, RATE_STEP = 50, 200, 10


class Announcer(QObject):
    """Speaks, announces to assistive technology, and remembers. Lives on the GUI thread."""

    announced = Signal(str, str)  # text, cue

    def __init__(
        self,
        live_label: QLabel,
        *,
        speaker: SpeakerLike | None = None,
        earcons: EarconPlayerLike | None = None,
        rate_percent: int = 100,
        log_size: int = 200,
    ):
        super().__init__(live_label)
        self._label = live_label
        self._speaker = speaker
        self._earcons = earcons
        self._rate = rate_percent
        self._last = ""
        self._lines: list[str] = []  # the last announcement, when it was a list said line by line
        self.channel = "both"  # app.screen_reader.SpeechChannel's value
        self.log: deque[Announcement] = deque(maxlen=log_size)
        self._apply_rate()

    @property
    def speech_available(self) -> bool:
        return self._speaker is not None

    @property
    def last(self) -> str:
        return self._last

    @property
    def rate_percent(self) -> int:
        return self._rate

    def set_speaker(self, speaker: SpeakerLike | None) -> None:
        if self._speaker is not None and speaker is not self._speaker:
            self._call_speaker("stop")
        self._speaker = speaker
        self._apply_rate()

    def set_earcons(self, earcons: EarconPlayerLike | None) -> None:
        self._earcons = earcons

    def announce(self, text: str, cue: Cue = Cue.INFO, *, speak: bool = True, queued: bool = False) -> Announcement:
        """Tell the user `text` by voice and through the accessibility API. Interrupts older speech, unless
        `queued`: then it is said after what is being said (start-up lines that belong together)."""
        text = text.strip()
        if not text:
            raise ValueError("announce() needs some text")
        self._last, self._lines = text, []
        self._play(cue)
        spoken = bool(speak and self._speaker is not None and self.channel != "screen_reader")
        if spoken:
            if not queued:
                self._call_speaker("stop")
            spoken = self._call_speaker("say", text)
        to_reader = self.channel != "own_voice"
        self._raise_accessible(text, cue, events=to_reader)
        item = Announcement(text=text, cue=cue, spoken=spoken, to_screen_reader=to_reader)
        self.log.append(item)
        self.announced.emit(text, str(cue))
        return item

    def announce_lines(self, lines: list[str], cue: Cue = Cue.INFO) -> list[Announcement]:
        """Say a list one line at a time (the F1 shortcuts): each line is its own utterance, queued after
        the one before, so the voice pauses between them as at the end of a sentence, and a screen reader
        gets one announcement per line. F3 repeats the whole list, line by line."""
        said = [self.announce(line, cue, queued=i > 0) for i, line in enumerate(ln for ln in lines if ln.strip())]
        self._lines = [a.text for a in said]
        self._last = "\n".join(self._lines)
        return said

    def stop(self) -> None:
        """Stop speaking now (any key does this)."""
        if self._speaker is not None:
            self._call_speaker("stop")

    def repeat_last(self) -> str:
        """Say the last announcement again; returns it ('' when there is none)."""
        if not self._last:
            return ""
        if self._lines:  # a list said line by line is repeated line by line
            lines = list(self._lines)
            self.announce_lines(lines)
            return self._last
        repeat = getattr(self._speaker, "repeat_last", None)
        if self.channel == "screen_reader":
            pass  # the screen reader says it again
        elif callable(repeat):
            self._call_speaker("stop")
            self._call_speaker("repeat_last")
        elif self._speaker is not None:
            self._call_speaker("stop")
            self._call_speaker("say", self._last)
        self._raise_accessible(self._last, Cue.INFO, events=self.channel != "own_voice")
        return self._last

    def change_rate(self, delta: int) -> int:
        self._rate = max(MIN_RATE, min(MAX_RATE, self._rate + delta))
        self._apply_rate()
        return self._rate

    def set_rate(self, percent: int) -> int:
        return self.change_rate(percent - self._rate)

    # -- internals -----------------------------------------------------------------------------

    def _apply_rate(self) -> None:
        if self._speaker is None:
            return
        setter = getattr(self._speaker, "set_rate", None)
        if callable(setter):
            self._call_speaker("set_rate", self._rate / 100.0)
        elif hasattr(self._speaker, "rate"):
            try:
                self._speaker.rate = self._rate / 100.0  # type: ignore[attr-defined]
            except AttributeError:
                log.debug("speaker has a read-only rate")

    def _call_speaker(self, method: str, *args: object) -> bool:
        """Call the speaker; a failing voice must never break the window, so errors are logged."""
        try:
            getattr(self._speaker, method)(*args)
            return True
        except Exception:  # a broken TTS engine is logged, the screen reader still speaks
            log.exception("speaker.%s failed", method)
            return False

    def _play(self, cue: Cue) -> None:
        if self._earcons is None or cue is Cue.INFO:
            return
        try:
            self._earcons.play(str(cue))
        except Exception:  # a missing sound must not hide the message
            log.exception("earcon %s failed", cue)

    def set_channel(self, channel: str) -> None:
        """Who speaks: "own_voice", "screen_reader" or "both" (see the module docstring)."""
        self.channel = str(channel)
        if self.channel == "screen_reader":
            self.stop()

    def _raise_accessible(self, text: str, cue: Cue, *, events: bool = True) -> None:
        self._label.setText(text)
        if not events:
            return
        self._label.setAccessibleName(text)
        event = QAccessibleAnnouncementEvent(self._label, text)
        assertive = cue in (Cue.CONFIRM, Cue.ERROR)
        event.setPoliteness(
            QAccessible.AnnouncementPoliteness.Assertive if assertive else QAccessible.AnnouncementPoliteness.Polite
        )
        QAccessible.updateAccessibility(event)
        QAccessible.updateAccessibility(QAccessibleEvent(self._label, QAccessible.Event.NameChanged))
