"""What the main window is given and the states it shows: the voice input and transcriber it is handed, the
services (`AppServices`: everything comes in from outside, nothing is a global), and `State`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.announce import EarconPlayerLike, SpeakerLike
from app.confirm_dialog import ConfirmPrompt
from app.phone import PhoneConnection
from app.runner import EpisodeStarter


class VoiceInputLike(Protocol):
    """Push-to-talk capture: `start()` begins recording, `stop()` returns the audio (a WAV path or
    samples) for the transcriber, or None when nothing was heard."""

    def start(self) -> object: ...

    def stop(self) -> Any: ...


class TranscriberLike(Protocol):
    def __call__(self, audio: Any, lang: str) -> str: ...


@dataclass(frozen=True)
class AppServices:
    speaker: SpeakerLike | None = None
    earcons: EarconPlayerLike | None = None
    voice_input: VoiceInputLike | None = None
    transcriber: TranscriberLike | None = None
    episode_starter: EpisodeStarter | None = None
    prompt_from_request: Callable[[Any, str], ConfirmPrompt] | None = None
    open_settings: Callable[[Any], object] | None = None  # called with the window
    simulated_phone: Callable[[str], PhoneConnection] | None = None
    history: Any = None  # assistant_core.history.HistoryStore: settings, PIN, conversation
    confirm_timeout_s: int | None = None  # None: the loop's Patience decides (reminders, then no)
    extra: dict[str, Any] = field(default_factory=dict)


class State:
    IDLE = "state_idle"
    LISTENING = "state_listening"
    TRANSCRIBING = "state_transcribing"
    WORKING = "state_working"
    WAITING = "state_waiting"
