"""The main window: phone mirror, conversation, push-to-talk, typed requests, status, and the run.

Everything the user must know goes through `self.announcer.announce()` (speech + screen reader). The
agent runs in a `GeneratorWorker` on its own worker thread; its events arrive here as signals, and a
confirmation request from the worker thread opens the `ConfirmDialog` through a `ConfirmBridge`. The
window never blocks: phone frames, taps, transcription and the run are all off the GUI thread.

Dependencies come in through `AppServices` (speaker, earcons, voice input, transcriber, the episode
starter, settings): nothing here reaches for a global.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QWidget,
)

from app.agent import AgentChoice, AgentKind
from app.announce import Announcer, Cue
from app.confirm_dialog import ConfirmDialog
from app.conversation import EntryKind
from app.keys import KeyForwarder
from app.phone import PhoneConnection
from app.shortcuts import help_lines
from app.strings import tr
from app.theme import HIGH_CONTRAST, STANDARD, Theme, ThemeName, apply_theme
from app.window_layout import LayoutPart, _KeyFilter
from app.window_parts import AppServices, State, TranscriberLike, VoiceInputLike  # noqa: F401  (re-exported)
from app.window_phone import PhonePart
from app.window_run import RunPart
from app.window_voice import VoicePart
from app.workers import BackgroundOp, ConfirmBridge, UserBridge, WorkerThread
from assistant_core import languages as langs
from assistant_core.types import ConfirmAnswer

log = logging.getLogger(__name__)

EVENTS_KEPT = 200


class MainWindow(LayoutPart, PhonePart, VoicePart, RunPart, QMainWindow):
    loading = Signal(object)  # assistant_core.policy.local.LoadProgress, from the worker thread
    request_started = Signal(str)
    run_finished = Signal(object)
    state_changed = Signal(str)

    def __init__(
        self,
        *,
        lang: str = "en",
        theme: Theme = STANDARD,
        services: AppServices | None = None,
        phone: PhoneConnection | None = None,
        agent: AgentChoice | None = None,
    ):
        super().__init__()
        self.setObjectName("mainWindow")
        self.lang = lang
        self.theme = theme
        self.services = services or AppServices()
        from phonebuddy.assistant import Assistant

        # The conversation's owner: routes what is heard or typed, holds what is pending, records the rows.
        self.assistant = Assistant(lang=lang, front=self, history=self.services.history)
        self.phone: PhoneConnection | None = None
        self.agent = agent or AgentChoice(AgentKind.DEMO)
        self.state = State.IDLE
        self._run: WorkerThread | None = None
        self._frame_op: BackgroundOp | None = None
        self._frame_dirty = False
        self._dialog: ConfirmDialog | None = None
        self._forwarder: KeyForwarder | None = None
        self._help_shown: QWidget | None = None
        self.caregiver_settings: Any = None
        # The loop's latest events, for review and tests: bounded, and never an observation (its full
        # screenshot, ~8 MB a step, is shown and dropped, not archived for the window's lifetime).
        self.events_seen: deque[object] = deque(maxlen=EVENTS_KEPT)
        self.last_result: object = None
        self.pin_dialog: QWidget | None = None
        self.settings_dialog: QWidget | None = None
        self.setup_wizard: Any = None  # app.setup_wizard.SetupWizard once opened (it follows F8)
        self._voice_handler: Callable[[str], object] | None = None  # who gets the next transcript
        self._voice_lang: str | None = None  # the transcription language for it (None: the window's)
        self._elsewhere: Callable[[str], object] | None = None  # another window's question (the wizard's)
        self._phone_names_read: tuple[Any, tuple[tuple[str, ...], tuple[str, ...]]] | None = None  # hotwords
        self.startup_problems: list[Any] = []  # bilingual texts (assistant_core.i18n.Text) said at start-up
        self.bridge = ConfirmBridge(parent=self)
        self.bridge.requested.connect(self._on_confirm_requested)
        self.user_bridge = UserBridge(parent=self)
        self.user_bridge.asked.connect(self._on_user_asked)
        self.loading.connect(self._on_loading, Qt.ConnectionType.QueuedConnection)
        self._saw_finished = False

        self._build()
        # A real phone changes on its own (notifications, the user's hand): refresh its picture while idle.
        self._live_timer = QTimer(self)
        self._live_timer.timeout.connect(self._live_tick)
        self.announcer = Announcer(self.live_region, speaker=self.services.speaker, earcons=self.services.earcons)
        from app.screen_reader import SpeechChannel, load_channel

        self.announcer.set_channel(load_channel(self.services.history) or SpeechChannel.BOTH)
        # issue 25: "Still thinking." (with the working earcon) through the user's voice channel during long
        # model steps: first after 3 s, then every 5 s at most, never while a question is open.
        from assistant_core.policy.waiting import ThinkingCue

        self.thinking_cue = ThinkingCue(
            lambda text: self.announcer.announce(text.get(self.lang), Cue.WORKING, queued=True),
            question_open=lambda: self._dialog is not None or self.state == State.WAITING)
        self._cue_timer = QTimer(self)
        self._cue_timer.setInterval(500)
        self._cue_timer.timeout.connect(self.thinking_cue.tick)
        self.channel_dialog: QWidget | None = None
        self._install_shortcuts()
        self._key_filter = _KeyFilter(self)
        QApplication.instance().installEventFilter(self._key_filter)
        self.retranslate(lang)
        self._started_up = False  # the start-up state is said once, when the window is first shown
        self.set_phone(phone, announce=False)
        self.talk_button.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- construction ----------------------------------------------------------------------------


    # -- language and theme ----------------------------------------------------------------------


    def toggle_language(self) -> None:
        """F8: the next registered language (assistant_core.languages; English and 中文 take turns)."""
        self.set_language(langs.next_code(self.lang))

    def set_language(self, lang: str, *, announce: bool = True, persist: bool = True) -> None:
        """F8's switch: every control re-labelled in `lang`, kept in the caregiver settings (the next start
        and the caregiver dialog use it); said unless the caller says it itself (the setup wizard says the
        language together with its page)."""
        from dataclasses import replace

        self.retranslate(lang)
        if self.caregiver_settings is not None and self.caregiver_settings.language != lang:
            self.caregiver_settings = replace(self.caregiver_settings, language=lang)
        if persist and self.services.history is not None:
            from app.settings_flow import save_language

            try:
                save_language(self.services.history, lang)
            except Exception:  # a full disk must not stop the switch on screen
                log.exception("could not save the language")
        if announce:
            self.announcer.announce(tr("language_now", lang))

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        apply_theme(QApplication.instance(), theme)

    def toggle_contrast(self) -> None:
        on = self.theme.name is not ThemeName.HIGH_CONTRAST
        self.set_theme(HIGH_CONTRAST if on else STANDARD)
        self.announcer.announce(tr("contrast_on" if on else "contrast_off", self.lang))

    def change_rate(self, delta: int) -> None:
        rate = self.announcer.change_rate(delta)
        self.announcer.announce(tr("rate_now", self.lang, rate=rate))

    # -- status ------------------------------------------------------------------------------------

    def _set_state(self, state: str) -> None:
        self.state = state
        if state == State.WORKING and hasattr(self, "thinking_cue"):  # issue 25's progress cue
            self.thinking_cue.start()
            self._cue_timer.start()
        elif hasattr(self, "thinking_cue"):
            self.thinking_cue.stop()
            self._cue_timer.stop()
        self._name_talk_button()
        self._update_status()
        self.state_changed.emit(state)


    # -- the phone ---------------------------------------------------------------------------------


    # -- voice -------------------------------------------------------------------------------------


    # -- requests and the run ------------------------------------------------------------------------

    def _entry(self, kind: EntryKind, text: str, *, record: bool = True) -> None:
        """Add to the conversation view; `record`: the assistant (the one writer) keeps it in the history."""
        self.conversation.add(kind, text)
        if record:
            self.assistant.note(str(kind), text)

    def is_running(self) -> bool:
        return self._run is not None

    def submit_typed(self) -> None:
        if self.submit_request(self.request_box.text()):
            self.request_box.clear()

    def submit_request(self, text: str) -> bool:
        """Typed text (or a test's request) goes to the assistant like speech: a command, an answer to the
        loop's question, or a new request. True when it was taken (started, answered, acted on)."""
        from phonebuddy.assistant import Heard, Route

        was_running = self.is_running()
        turn = self.assistant.hear(Heard(text, typed=True))
        if turn.route is Route.REQUEST:
            return not turn.busy and not was_running and self.is_running()
        return turn.route in (Route.ANSWER, Route.COMMAND)

    # -- the assistant's front end (phonebuddy.assistant.Front) ----------------------------------------------


    # -- confirmation ------------------------------------------------------------------------------


    def set_agent(self, agent: AgentChoice) -> None:
        """Switch the brain (between runs): the status line says which one runs."""
        self.agent = agent
        self._update_status()

    def apply_settings(self, settings: Any, agent: AgentChoice | None = None) -> None:
        """Apply saved caregiver settings (assistant_core.settings.CaregiverSettings) to the window."""
        self.caregiver_settings = settings
        if agent is not None:
            self.agent = agent
        self.announcer.set_rate(round(settings.speech_rate * 100))
        self.apply_voice(getattr(settings, "voice", ""))
        if settings.language != self.lang:
            self.retranslate(settings.language)
        self._update_status()

    def apply_voice(self, voice: str) -> None:
        """The caregiver's Chinese voice ('female', the default, or 'male'; or a Kokoro Mandarin voice name
        such as 'zf_xiaoyi') on the speaker's router (speech.tts.VoiceRouter.set_voice), from the next
        Chinese sentence. Any other name (not a Mandarin voice) means the default. A speaker without a
        router (no speech, a stand-in) is left alone."""
        router = getattr(self.services.speaker, "router", None)
        if router is None or not hasattr(router, "set_voice"):
            return
        voice = (voice or "").strip()
        if voice.lower() in ("female", "male"):
            voice = voice.lower()
        elif not re.fullmatch(r"z[fm]_[a-z]+", voice):
            voice = "female"
        router.set_voice("zh", voice)

    # -- help, settings, areas ---------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        from app.help_dialog import ShortcutsDialog

        lines = help_lines(self.lang)
        dialog = ShortcutsDialog(lines, lang=self.lang, parent=self)
        self._help_shown = dialog
        dialog.open()
        stop = langs.get(self.lang).sentence_stop.strip()
        # One shortcut per line, each its own sentence: the voice pauses after each.
        self.announcer.announce_lines([ln if ln.endswith((".", "。")) else ln + stop for ln in lines])

    def open_settings(self) -> None:
        opener = self.services.open_settings
        if opener is None:
            from app.settings_flow import open_caregiver_settings

            opener = open_caregiver_settings
        opener(self)

    def repeat_last(self) -> None:
        if not self.announcer.repeat_last():
            self.announcer.announce(tr("nothing_to_repeat", self.lang))

    def next_area(self) -> None:
        current = self.focusWidget()
        areas = [a for a in self.areas if a.isVisible()]
        idx = areas.index(current) if current in areas else -1
        target = areas[(idx + 1) % len(areas)]
        if target is self.conversation and self.conversation.count():
            self.conversation.setCurrentRow(self.conversation.count() - 1)  # F6 lands on the newest entry
        target.setFocus(Qt.FocusReason.TabFocusReason)

    # -- closing -----------------------------------------------------------------------------------

    def shutdown(self, wait_ms: int = 3000) -> None:
        """Stop the run and background work; called on close and by tests."""
        self._live_timer.stop()
        self.announcer.stop()
        if self._run is not None:
            self._run.stop()
            self.bridge.answer(ConfirmAnswer.NO)
            self._run.wait(wait_ms)
        if self._frame_op is not None and self._frame_op.is_running():
            self._frame_op.wait(wait_ms)
        QApplication.instance().removeEventFilter(self._key_filter)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        if self.phone is not None:
            self.phone.close()
        super().closeEvent(event)

