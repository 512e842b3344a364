"""The main window's push-to-talk: listening while Space (or the talk button) is held, transcription off the
GUI thread, and the transcript handed to the assistant (phonebuddy.assistant), which routes it once. A part
of app.main_window.MainWindow (a mixin).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.announce import Cue
from app.failures import describe_failure
from app.strings import tr
from app.window_parts import State
from app.workers import BackgroundOp

log = logging.getLogger(__name__)


class VoicePart:
    """Push-to-talk (see the module docstring)."""

    def toggle_listening(self) -> None:
        if self._dialog is not None:
            self._dialog.voice_requested.emit()
        elif self.state == State.LISTENING:
            self.stop_listening()
        else:
            self.start_listening()

    def listen_for(self, handler: Callable[[str], object], *, lang: str | None = None) -> bool:
        """Push-to-talk on behalf of another window (the setup wizard): starts listening, or stops and
        hands the transcript to `handler` instead of treating it as a request. `lang` is the
        transcription language ("auto": detect it; None: the window's). False when this window has no
        voice input at all (the caller says so its own way)."""
        if self.services.voice_input is None or self.services.transcriber is None:
            return False
        if self.state == State.LISTENING:
            self.stop_listening()
            return True
        self._voice_handler, self._voice_lang = handler, lang
        self.start_listening()
        if self.state != State.LISTENING:  # refused (busy, no microphone): already said why
            self._voice_handler = self._voice_lang = None
        return True

    def start_listening(self) -> None:
        if self.state == State.LISTENING:
            return
        voice = self.services.voice_input
        if voice is None or self.services.transcriber is None:
            self.announcer.announce(tr("no_mic", self.lang), Cue.ERROR)
            return
        # Listening is allowed during a run too: "stop" must be heard at any moment (a request heard
        # then is answered "busy" by submit_request).
        try:
            voice.start()
        except Exception as exc:  # no microphone, or it refused to open: say so, keep the typed path
            text = getattr(exc, "text", None)
            message = text.get(self.lang) if text is not None else tr("no_mic", self.lang)
            self.announcer.announce(message, Cue.ERROR)
            return
        self._set_state(State.LISTENING)
        self.announcer.announce(tr("state_listening", self.lang), Cue.LISTENING)

    def stop_listening(self) -> None:
        if self.state != State.LISTENING:
            return
        voice, transcriber, lang = self.services.voice_input, self.services.transcriber, self._voice_lang or self.lang
        self._set_state(State.TRANSCRIBING)
        self.announcer.announce(tr("state_transcribing", self.lang), Cue.WORKING)

        def work() -> str:
            audio = voice.stop()
            if audio is None:
                return ""
            set_names = getattr(transcriber, "set_phone_names", None)
            if set_names is not None:  # the phone's names as hotwords (app.voice.WhisperTranscription)
                contacts, apps = self._phone_names()
                set_names(contacts=contacts, apps=apps)
            return transcriber(audio, lang).strip()

        BackgroundOp(work, on_done=self._on_transcribed, on_failed=self._on_transcribe_failed, parent=self).start()

    def _on_transcribed(self, text: str) -> None:
        """What was heard goes to the assistant (phonebuddy.assistant), which routes it once."""
        from phonebuddy.assistant import Heard

        self._set_state(State.WAITING if self._dialog is not None else (State.WORKING if self.is_running() else State.IDLE))
        handler, self._voice_handler, self._voice_lang = self._voice_handler, None, None
        if handler is not None:
            self._elsewhere = handler
        last = getattr(self.services.transcriber, "last", None)
        unsure = str(getattr(last, "status", "")) == "confirm"  # the recogniser itself is unsure (speech.asr)
        self.assistant.hear(Heard(text, unsure=unsure), elsewhere=handler is not None)

    def _on_transcribe_failed(self, exc: BaseException) -> None:
        self._voice_handler = self._voice_lang = None
        self._set_state(State.IDLE if not self.is_running() else State.WORKING)
        self.announcer.announce(tr("error", self.lang, text=describe_failure(exc, self.lang)), Cue.ERROR)
