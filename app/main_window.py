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
import threading
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.agent import AgentChoice, AgentKind
from app.announce import Announcer, Cue, EarconPlayerLike, SpeakerLike
from app.confirm_dialog import STOP_KEYS, ConfirmDialog, ConfirmPrompt
from app.conversation import ConversationView, EntryKind
from app.events import Presented, present, present_result
from app.keys import KeyForwarder
from app.mirror_view import MirrorView, pil_to_qimage, scaled_frame
from app.phone import PhoneConnection
from app.pin_pad import PinPad, handover_done
from app.runner import describe_failure
from app.shortcuts import SHORTCUTS, Command, help_lines
from app.strings import tr
from app.theme import HIGH_CONTRAST, STANDARD, Theme, ThemeName, apply_theme
from app.workers import BackgroundOp, ConfirmBridge, GeneratorWorker, UserBridge, WorkerThread
from assistant_core.types import Action, ConfirmAnswer

log = logging.getLogger(__name__)

EVENTS_KEPT = 200


class VoiceInputLike(Protocol):
    """Push-to-talk capture: `start()` begins recording, `stop()` returns the audio (a WAV path or
    samples) for the transcriber, or None when nothing was heard."""

    def start(self) -> object: ...

    def stop(self) -> Any: ...


class TranscriberLike(Protocol):
    def __call__(self, audio: Any, lang: str) -> str: ...


@dataclass(frozen=True)
class EpisodeRequest:
    """Everything one run needs; handed to the episode starter on the worker thread."""

    goal: str
    lang: str
    connection: PhoneConnection
    agent: AgentChoice
    confirmer: Any  # assistant_core.confirm.Confirmer (the window's ConfirmBridge)
    user: Any  # assistant_core.loop.UserChannel (the window's UserBridge)
    stop_event: threading.Event
    settings: Any = None  # assistant_core.settings.CaregiverSettings, None before any are loaded
    history: Any = None  # assistant_core.history.HistoryStore
    progress: Callable[[Any], None] | None = None  # model-loading reports (called on the worker thread)
    started: Callable[[int], None] | None = None  # told the run id (phonebuddy.assistant.Assistant.run_started)


EpisodeStarter = Callable[[EpisodeRequest], Generator[Any, Any, Any]]


@dataclass(frozen=True)
class AppServices:
    speaker: SpeakerLike | None = None
    earcons: EarconPlayerLike | None = None
    voice_input: VoiceInputLike | None = None
    transcriber: TranscriberLike | None = None
    episode_starter: EpisodeStarter | None = None
    prompt_from_request: Callable[[Any, str], ConfirmPrompt] | None = None
    open_settings: Callable[[QWidget], object] | None = None
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


class _KeyFilter(QObject):
    """Application-wide: any key stops speech (during a question, only the dialog's stop, repeat and answers
    do); with 'send keys' on, keys go to the phone (F9 excepted)."""

    def __init__(self, window: MainWindow):
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride):
            return False
        assert isinstance(event, QKeyEvent)
        w = self.window
        forwarding = (w.send_keys_box.isChecked() and event.key() != Qt.Key.Key_F9
                      and isinstance(obj, QWidget) and obj.window() is w)
        if kind == QEvent.Type.ShortcutOverride:
            if forwarding:
                event.accept()  # the phone gets the key: none of our shortcuts may fire
                return True
            return False
        # A question is open: only stop, repeat or a counted answer silence it, and the dialog says each
        # itself. A key it ignores (too early, held, not its own), or one that reached this window while
        # the dialog took the focus, leaves the question being read.
        question_open = w._dialog is not None and event.key() not in STOP_KEYS
        if question_open and isinstance(obj, QWidget) and obj.window() is w._dialog:
            return False
        # Only where the key first arrives (the window, then the focused widget): a key the focused widget
        # used and let go on to its parents (Enter in the request box) must not silence what it just
        # started saying ("Working on ...").
        focused = QApplication.focusWidget()
        first_arrival = not (isinstance(obj, QWidget) and focused is not None and obj is not focused
                             and obj.isAncestorOf(focused))
        if first_arrival and event.key() != Qt.Key.Key_F3 and not event.isAutoRepeat() and not question_open:
            w.announcer.stop()
        if forwarding:
            w.forward_key(event)
            return True
        return False


class MainWindow(QMainWindow):
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

    def _build(self) -> None:
        central = QWidget()
        central.setObjectName("central")
        self.setCentralWidget(central)
        outer = QVBoxLayout(central)

        self.status_line = QLabel()
        self.status_line.setObjectName("statusLine")
        self.status_line.setWordWrap(True)
        self.status_line.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.status_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        outer.addWidget(self.status_line)

        self.offer_bar = QFrame()
        self.offer_bar.setObjectName("offerBar")
        offer = QHBoxLayout(self.offer_bar)
        self.offer_label = QLabel()
        self.offer_label.setWordWrap(True)
        self.use_sim_button = QPushButton()
        self.use_sim_button.setObjectName("useSimButton")
        self.use_sim_button.clicked.connect(self.use_simulated_phone)
        offer.addWidget(self.offer_label, 1)
        offer.addWidget(self.use_sim_button)
        outer.addWidget(self.offer_bar)

        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split, 1)

        left = QWidget()
        lv = QVBoxLayout(left)
        self.phone_label = QLabel()
        self.phone_label.setObjectName("phoneLabel")
        self.phone_label.setWordWrap(True)
        self.mirror = MirrorView()
        self.mirror.tapped.connect(self._on_mirror_tap)
        self.mirror.long_pressed.connect(self._on_mirror_long_press)
        self.mirror.swiped.connect(self._on_mirror_swipe)
        self.send_keys_box = QCheckBox()
        self.send_keys_box.setObjectName("sendKeysBox")
        self.send_keys_box.toggled.connect(self._on_send_keys_toggled)
        lv.addWidget(self.phone_label)
        lv.addWidget(self.mirror, 1)
        self.pin_pad = PinPad(self)  # the simulated phone's protected PIN, typed by the user (app.pin_pad)
        lv.addWidget(self.pin_pad)
        lv.addWidget(self.send_keys_box)
        split.addWidget(left)

        right = QWidget()
        rv = QVBoxLayout(right)
        self.conversation_label = QLabel()
        self.conversation = ConversationView()
        self.conversation_label.setBuddy(self.conversation)
        self.talk_button = QPushButton()
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setMinimumHeight(80)
        self.talk_button.pressed.connect(self.start_listening)
        self.talk_button.released.connect(self.stop_listening)
        self.request_label = QLabel()
        self.request_box = QLineEdit()
        self.request_box.setObjectName("requestBox")
        self.request_box.returnPressed.connect(self.submit_typed)
        self.request_label.setBuddy(self.request_box)
        self.send_button = QPushButton()
        self.send_button.setObjectName("sendButton")
        self.send_button.clicked.connect(self.submit_typed)
        row = QHBoxLayout()
        row.addWidget(self.request_box, 1)
        row.addWidget(self.send_button)
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopButton")
        self.stop_button.clicked.connect(self.stop_run)
        self.settings_button = QPushButton()
        self.settings_button.setObjectName("settingsButton")
        self.settings_button.clicked.connect(self.open_settings)
        self.help_button = QPushButton()
        self.help_button.setObjectName("helpButton")
        self.help_button.clicked.connect(self.show_shortcuts)
        tools = QHBoxLayout()
        for b in (self.stop_button, self.settings_button, self.help_button):
            tools.addWidget(b)
        rv.addWidget(self.conversation_label)
        rv.addWidget(self.conversation, 1)
        rv.addWidget(self.talk_button)
        rv.addWidget(self.request_label)
        rv.addLayout(row)
        rv.addLayout(tools)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)

        self.live_region = QLabel()
        self.live_region.setObjectName("liveRegion")
        self.live_region.setWordWrap(True)
        self.live_region.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.live_region.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByKeyboard)
        outer.addWidget(self.live_region)

        order = [
            self.talk_button, self.request_box, self.send_button, self.conversation, self.mirror,
            self.send_keys_box, self.stop_button, self.settings_button, self.help_button,
            self.use_sim_button, self.status_line, self.live_region,
        ]
        for a, b in zip(order, order[1:], strict=False):
            self.setTabOrder(a, b)
        self.areas = [self.talk_button, self.request_box, self.conversation, self.mirror, self.status_line]
        self.resize(1100, 800)

    def _install_shortcuts(self) -> None:
        handlers: dict[Command, Callable[[], object]] = {
            Command.HELP: self.show_shortcuts,
            Command.TALK: self.toggle_listening,
            Command.REPEAT: self.repeat_last,
            Command.STOP: self.stop_run,
            Command.STOP_ALT: self.stop_run,
            Command.SIM_PHONE: self.use_simulated_phone,
            Command.CHANNEL: self.next_channel,
            Command.REQUEST_BOX: self.request_box.setFocus,
            Command.NEXT_AREA: self.next_area,
            Command.CONTRAST: self.toggle_contrast,
            Command.LANGUAGE: self.toggle_language,
            Command.SEND_KEYS: self.send_keys_box.toggle,
            Command.RATE_UP: lambda: self.change_rate(+10),
            Command.RATE_DOWN: lambda: self.change_rate(-10),
            Command.HANDOVER_DONE: lambda: handover_done(self),
            Command.SETTINGS: self.open_settings,
            Command.QUIT: self.close,
        }
        self.shortcuts: dict[Command, QShortcut] = {}
        for sc in SHORTCUTS:
            shortcut = QShortcut(QKeySequence(sc.keys), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(handlers[sc.command])
            self.shortcuts[sc.command] = shortcut

    # -- language and theme ----------------------------------------------------------------------

    def retranslate(self, lang: str) -> None:
        self.lang = self.assistant.lang = lang
        L = lang
        self.setWindowTitle(tr("window_title", L))
        self.setAccessibleName(tr("window_title", L))
        self.setAccessibleDescription(tr("window_desc", L))
        labelled: list[tuple[QWidget, str, str]] = [
            (self.mirror, "mirror", "mirror_desc"),
            (self.send_keys_box, "send_keys", "send_keys_desc"),
            (self.conversation, "conversation", "conversation_desc"),
            (self.request_box, "request", "request_desc"),
            (self.send_button, "send", "send_desc"),
            (self.stop_button, "stop", "stop_desc"),
            (self.settings_button, "settings", "settings_desc"),
            (self.help_button, "help", "help_desc"),
            (self.use_sim_button, "use_sim", "use_sim_desc"),
            (self.talk_button, "talk", "talk_desc"),
        ]
        for widget, name, desc in labelled:
            widget.setAccessibleName(tr(name, L))
            widget.setAccessibleDescription(tr(desc, L))
        for button, key in (
            (self.send_button, "send"), (self.stop_button, "stop"), (self.settings_button, "settings"),
            (self.help_button, "help"), (self.use_sim_button, "use_sim"),
        ):
            button.setText(tr(key, L))
        self.send_keys_box.setText(tr("send_keys", L))
        self._name_talk_button()
        self.pin_pad.retranslate(L)
        self.conversation_label.setText(tr("conversation", L))
        self.request_label.setText(tr("request", L))
        self.request_box.setPlaceholderText(tr("request_placeholder", L))
        self.offer_label.setText(tr("sim_phone_offer", L))
        self.mirror.set_placeholder(tr("mirror_empty", L))
        self.status_line.setAccessibleDescription(tr("status_desc", L))
        self.live_region.setAccessibleDescription(tr("announcements", L))
        if not self.live_region.text():
            self.live_region.setAccessibleName(tr("announcements", L))
        self._update_status()
        if self._dialog is not None:
            self._dialog.retranslate(L)
        wizard = self.setup_wizard
        if wizard is not None and wizard.isVisible() and wizard.lang != L:
            wizard.retranslate(L)

    def toggle_language(self) -> None:
        self.set_language("zh" if self.lang == "en" else "en")

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

    def _name_talk_button(self) -> None:
        """The talk button's text and accessible name say "Listening" while it listens (en+zh)."""
        key = "talk_listening" if self.state == State.LISTENING else "talk"
        self.talk_button.setText(tr(key, self.lang))
        self.talk_button.setAccessibleName(tr(key, self.lang))

    def _update_status(self) -> None:
        phone = self.phone.label.get(self.lang) if self.phone else tr("no_phone", self.lang)
        text = tr("status_line", self.lang, phone=phone, agent=self.agent.label(self.lang), state=tr(self.state, self.lang))
        self.status_line.setText(text)
        self.status_line.setAccessibleName(text)
        self.phone_label.setText(phone)
        self.offer_bar.setVisible(self.phone is None)

    # -- the phone ---------------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._started_up:
            self._started_up = True
            QTimer.singleShot(0, self.announce_startup)

    def announce_startup(self) -> None:
        """Say what the window opened on: the phone (or how to try the simulated one, with its key), and
        that the assistant is a scripted demonstration when it is one. With a screen reader running and
        no choice made yet, first ask which voice speaks."""
        from app.screen_reader import load_channel

        if load_channel(self.services.history) is None and self.services.history is not None:
            detect = self.services.extra.get("detect_screen_reader")
            if detect is None:
                from app.screen_reader import detect_screen_reader as detect
            reader = detect()
            if reader:
                self.ask_channel(reader)
                return
        self._say_startup()

    def ask_channel(self, reader: str) -> None:
        """The first-run question (app.channel_dialog); the start-up state is said once it is answered."""
        from app.channel_dialog import ChannelDialog

        dialog = ChannelDialog(lang=self.lang, reader=reader, parent=self)
        dialog.chosen.connect(self._on_channel_chosen)
        self.announcer.set_channel("screen_reader")  # our own voice stays silent until it is answered
        self.channel_dialog = dialog
        dialog.open()
        self.announcer.announce(dialog.question.text(), Cue.CONFIRM)

    def _on_channel_chosen(self, channel: object) -> None:
        self.set_channel(channel)
        self._say_startup()

    def set_channel(self, channel: object, *, announce: bool = True) -> None:
        from app.screen_reader import SpeechChannel, save_channel

        channel = SpeechChannel(channel)
        self.announcer.set_channel(channel)
        save_channel(self.services.history, channel)
        if announce:
            self.announcer.announce(tr(f"channel_now_{channel}", self.lang))

    def next_channel(self) -> None:
        """F11: PhoneBuddy's voice → the screen reader → both → PhoneBuddy's voice."""
        from app.screen_reader import SpeechChannel

        order = [SpeechChannel.OWN_VOICE, SpeechChannel.SCREEN_READER, SpeechChannel.BOTH]
        current = SpeechChannel(self.announcer.channel)
        self.set_channel(order[(order.index(current) + 1) % len(order)])

    def _say_startup(self) -> None:
        # The start-up lines are said one after another (queued), none cutting off the one before.
        if self.phone is None:
            self.announcer.announce(tr("startup_no_phone", self.lang))
        else:
            self.announcer.announce(tr("startup_phone", self.lang, phone=self.phone.label.get(self.lang).rstrip("。.")))
            if self.phone.is_simulated and self.agent.kind is AgentKind.DEMO:
                self.announcer.announce(tr("demo_note", self.lang), queued=True)
        # Settings problems found at start-up (app.main: values replaced by safe ones, a change made outside
        # the app): said once, last.
        problems, self.startup_problems = self.startup_problems, []
        if problems:
            self.announcer.announce(" ".join(p.get(self.lang) for p in problems), Cue.ERROR, queued=True)

    def set_phone(self, phone: PhoneConnection | None, *, announce: bool = True) -> None:
        if self.phone is not None and self.phone is not phone:
            self.phone.close()
        self.phone = phone
        self._forwarder = KeyForwarder(phone.device, lambda: phone.world) if phone else None
        self._update_status()
        self._live_timer.stop()
        if phone is not None and not phone.is_simulated:
            self._live_timer.setInterval(2000)
            self._live_timer.start()
            if self.services.extra.get("mirror", True):
                from app.phone import start_mirror

                BackgroundOp(lambda: start_mirror(phone), on_done=lambda _m: self._live_timer.setInterval(200),
                             on_failed=lambda e: log.warning("mirroring unavailable, using screenshots: %s", e),
                             parent=self).start()
        if phone is not None:
            self.refresh_mirror()
            if phone.is_simulated and self.agent.kind is AgentKind.DEMO:
                self._entry(EntryKind.NOTE, tr("demo_note", self.lang))
                if announce:
                    self.announcer.announce(tr("demo_note", self.lang))

    def use_simulated_phone(self) -> None:
        if self.is_running():
            self.announcer.announce(tr("busy", self.lang))
            return
        if self.phone is not None and self.phone.is_simulated:
            self.announcer.announce(self.phone.label.get(self.lang))
            return
        opener = self.services.simulated_phone
        if opener is None:
            from app.phone import open_simulated

            opener = open_simulated
        self.set_phone(opener(self.lang), announce=False)
        self.announcer.announce(self.phone.label.get(self.lang) if self.phone else tr("no_phone", self.lang))
        if self.phone is not None and self.agent.kind is AgentKind.DEMO:
            self.announcer.announce(tr("demo_note", self.lang), queued=True)

    def refresh_mirror(self) -> None:
        """Fetch and scale the phone's latest frame off the GUI thread (coalesced)."""
        if self.phone is None:
            return
        if self._frame_op is not None:
            self._frame_dirty = True
            return
        phone = self.phone

        def fetch():
            image, size = phone.frame()
            return (None if image is None else pil_to_qimage(scaled_frame(image))), size

        self._frame_op = BackgroundOp(fetch, on_done=self._on_frame, on_failed=self._on_frame_failed, parent=self)
        self._frame_op.start()

    def _live_tick(self) -> None:
        if self._frame_op is None:
            self.refresh_mirror()

    def show_frame(self, image) -> None:
        """Show a frame the loop already captured (scaled off the GUI thread)."""
        if self._frame_op is not None:
            self._frame_dirty = True
            return
        size = (image.width, image.height)
        self._frame_op = BackgroundOp(lambda: (pil_to_qimage(scaled_frame(image)), size), on_done=self._on_frame,
                                      on_failed=self._on_frame_failed, parent=self)
        self._frame_op.start()

    def _on_frame(self, result) -> None:
        self._frame_op = None
        image, size = result
        if image is not None:
            self.mirror.set_frame(image, size)
        if self._frame_dirty:
            self._frame_dirty = False
            self.refresh_mirror()

    def _on_frame_failed(self, exc: BaseException) -> None:
        self._frame_op = None
        log.warning("could not fetch a phone frame: %s", exc)

    def _user_act(self, action: Action, spoken: str) -> None:
        if self.phone is None:
            return
        if self.is_running():
            self.announcer.announce(tr("mirror_busy", self.lang))
            return
        device = self.phone.device
        BackgroundOp(lambda: device.act(action), on_done=lambda _r: self.refresh_mirror(),
                     on_failed=lambda e: self.announcer.announce(tr("error", self.lang, text=describe_failure(e, self.lang)), Cue.ERROR),
                     parent=self).start()
        self.announcer.announce(spoken, speak=False)

    def _on_mirror_tap(self, x: int, y: int) -> None:
        self._user_act(Action.click(x, y), tr("tapped", self.lang, x=x, y=y))

    def _on_mirror_long_press(self, x: int, y: int) -> None:
        self._user_act(Action.long_press(x, y), tr("tapped", self.lang, x=x, y=y))

    def _on_mirror_swipe(self, x1: int, y1: int, x2: int, y2: int, ms: int) -> None:
        self._user_act(Action.scroll(x1, y1, x2, y2, duration_ms=ms), tr("tapped", self.lang, x=x2, y=y2))

    def _on_send_keys_toggled(self, on: bool) -> None:
        self.announcer.announce(tr("send_keys_on" if on else "send_keys_off", self.lang))

    def forward_key(self, event: QKeyEvent) -> None:
        if self._forwarder is None or self.is_running():
            return
        try:
            self._forwarder.forward(event)
        except Exception as exc:  # the phone refusing a key is reported, not fatal
            self.announcer.announce(tr("error", self.lang, text=describe_failure(exc, self.lang)), Cue.ERROR)
        self.refresh_mirror()

    # -- voice -------------------------------------------------------------------------------------

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

    def _phone_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(contact names, app labels) of the phone for the recogniser's hotwords (harness.fastpath.read_facts:
        one contacts query and the app list), read once per phone, on the worker thread. Waits at most half
        a second for a phone that is busy (a screenshot, a run's step: a spoken stop must not wait longer);
        the names are then left for the next time."""
        phone = self.phone
        if phone is None:
            return (), ()
        cached = self._phone_names_read
        if cached is not None and cached[0] is phone:
            return cached[1]
        device = phone.device
        lock = getattr(device, "lock", None)
        if lock is not None and not lock.acquire(timeout=0.5):
            return (), ()
        try:
            from harness.fastpath import read_facts

            facts = read_facts(getattr(device, "inner", device))
            names = (tuple(c.name for c in facts.contacts if c.name),
                     tuple(label for label in facts.apps.values() if label))
        except Exception:  # the phone went away or refused: no hotwords from it this time
            log.exception("could not read the phone's names for the recogniser")
            return (), ()
        finally:
            if lock is not None:
                lock.release()
        self._phone_names_read = (phone, names)
        return names

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

    def say(self, kind: str | None, text: str, cue: str | None) -> None:
        if kind:
            self.conversation.add(EntryKind(kind), text)
        if cue:
            self.announcer.announce(text, Cue(cue))

    def command(self, command: Any) -> None:
        from assistant_core.session import MetaCommand

        {MetaCommand.STOP: self.stop_run, MetaCommand.REPEAT: self.repeat_last,
         MetaCommand.SLOWER: lambda: self.change_rate(-10), MetaCommand.FASTER: lambda: self.change_rate(+10),
         MetaCommand.HELP: self.show_shortcuts}[command]()

    def confirm(self, answer: ConfirmAnswer) -> None:
        if self._dialog is not None:
            self._dialog.answer_with(answer)

    def reply(self, text: str | None) -> None:
        self.user_bridge.reply(text)

    def elsewhere(self, text: str) -> None:
        handler, self._elsewhere = self._elsewhere, None
        if handler is not None:
            handler(text)

    def start(self, goal: str) -> bool:
        """Start the run for `goal` on a worker thread (the assistant decided to; the starter assembles it
        through the front hall). False (said why) when there is no phone."""
        if self.phone is None:
            self.announcer.announce(tr("sim_phone_offer", self.lang), Cue.ERROR)
            return False
        self._entry(EntryKind.REQUEST, tr("you_said", self.lang, text=goal), record=False)  # the assistant records the goal
        starter = self.services.episode_starter
        if starter is None:
            from app.runner import start_episode

            starter = start_episode
        bridge, user, phone, agent, lang = self.bridge, self.user_bridge, self.phone, self.agent, self.lang
        settings, history, started = self.caregiver_settings, self.services.history, self.assistant.run_started

        progress = self.loading.emit  # a signal: safe to emit from the worker thread (queued to the GUI)

        def factory(stop_event: threading.Event):
            bridge.bind_stop(stop_event)
            user.bind_stop(stop_event)
            return starter(EpisodeRequest(goal, lang, phone, agent, bridge, user, stop_event, settings, history,
                                          progress, started))

        self._saw_finished = False
        worker = GeneratorWorker(factory)
        worker.event.connect(self._on_agent_event)
        worker.finished.connect(self._on_agent_finished)
        worker.failed.connect(self._on_agent_failed)
        worker.stopped.connect(self._on_agent_stopped)
        self._run = WorkerThread(worker)
        self._run.ended.connect(self._on_thread_ended)
        self._set_state(State.WORKING)
        self.announcer.announce(tr("started", self.lang, text=goal), Cue.WORKING)
        self.request_started.emit(goal)
        self._run.start()
        return True

    def stop_run(self) -> None:
        """Escape / F4 / a spoken "stop": stop speaking, close a pending question (its answer is no),
        and end the run. The stop flag is raised first, so whatever the worker is doing (observing,
        thinking, gating, asking, about to dispatch) it checks the flag before anything else reaches
        the phone, and a question it had already queued never opens."""
        self.announcer.stop()
        self.assistant.read_back = None
        if self._run is None:
            return
        self._run.stop()
        if self._dialog is not None:
            dialog, self._dialog = self._dialog, None
            dialog.close_quietly()
            dialog.deleteLater()
        self.bridge.answer(ConfirmAnswer.NO)
        if self.user_bridge.pending:
            self.user_bridge.reply(None)

    def stopping(self) -> bool:
        """A run is on and the user has asked it to stop (it ends at its next check)."""
        return self._run is not None and self._run.worker.stop_event.is_set()

    def _show(self, p: Presented | None) -> None:
        """Render one of the run's events (app.events); the assistant records them."""
        if p is None:
            return
        if p.kind is not None and p.text:
            self._entry(p.kind, p.text, record=False)
            if p.speak:
                self.announcer.announce(p.text, p.cue)
        if p.closes_question and self._dialog is not None:
            dialog, self._dialog = self._dialog, None
            dialog.close_quietly()
            dialog.deleteLater()
            self._set_state(State.WORKING)
        if p.frame is not None:
            self.show_frame(p.frame)
        elif p.refresh_mirror:
            self.refresh_mirror()

    def _on_agent_event(self, event: object) -> None:
        from assistant_core.events import Finished, Observed

        if isinstance(event, Finished):
            self._saw_finished = True
        if not isinstance(event, Observed):
            self.events_seen.append(event)
        self.assistant.on_event(event)
        self._show(present(event, self.lang))
        self.pin_pad.on_event(event)
        if self.state == State.WORKING:
            self.thinking_cue.start()  # each loop event restarts the wait: the cue marks long silences only

    def _on_agent_finished(self, result: object) -> None:
        closing = present_result(result, self.lang) if not self._saw_finished else None
        self._show(closing)
        self.assistant.ended(closing.text if closing is not None else "")
        self.refresh_mirror()
        self._end_run(result)

    def _on_agent_failed(self, exc: object) -> None:
        line = tr("error", self.lang, text=describe_failure(exc, self.lang))
        self._show(Presented(EntryKind.ERROR, line, Cue.ERROR))
        self.assistant.ended(line, kind=str(EntryKind.ERROR))
        self.refresh_mirror()
        self._end_run(exc)

    def _on_agent_stopped(self) -> None:
        self._show(Presented(EntryKind.RESULT, tr("stopped_by_user", self.lang), Cue.INFO))
        self.assistant.ended(stopped=True)
        self.refresh_mirror()
        self._end_run(None)

    def _end_run(self, result: object) -> None:
        self._set_state(State.IDLE)
        self.last_result = result
        self.run_finished.emit(result)

    def _on_thread_ended(self) -> None:
        if self._run is not None:
            self._run.wait(1000)
        self._run = None

    # -- confirmation ------------------------------------------------------------------------------

    def _on_confirm_requested(self, request: object) -> None:
        from app.runner import prompt_from_request

        if self._dialog is not None:
            return  # the loop asks again after a reminder or a re-reading: the dialog is still open
        if self._run is None or self.stopping():
            return  # stop came first: the question was queued before the worker saw it; never show it
        make_prompt = self.services.prompt_from_request or prompt_from_request
        prompt = make_prompt(request, self.lang)
        dialog = ConfirmDialog(prompt, lang=self.lang, announce=self.announcer.announce,
                               timeout_s=self.services.confirm_timeout_s,
                               on_repeat=lambda: self.bridge.answer(ConfirmAnswer.REPEAT), on_stop=self.stop_run,
                               parent=self)
        dialog.answered.connect(self._on_confirm_answered)
        dialog.voice_requested.connect(self._listen_for_answer)
        dialog.voice_hold.connect(lambda down: self.start_listening() if down else self.stop_listening())
        self._dialog = dialog
        self._set_state(State.WAITING)
        self.refresh_mirror()
        dialog.start()

    def _on_loading(self, report: object) -> None:
        """The model is loading (first step after start): say each stage once, show it in the status."""
        message = getattr(report, "message", None)
        text = message.get(self.lang) if hasattr(message, "get") else str(report)
        fraction = float(getattr(report, "fraction", 0.0))
        line = f"{text} {round(100 * fraction)}%" if 0.0 < fraction < 1.0 else text
        self._entry(EntryKind.NOTE, line)
        self.announcer.announce(line, Cue.WORKING)

    def _on_user_asked(self, question: object) -> None:
        """The loop asked a free question (its Paused event already announced it): focus the box."""
        self._set_state(State.WAITING)
        (self.pin_pad if self.pin_pad.isVisible() else self.request_box).setFocus()

    def _listen_for_answer(self) -> None:
        if self.state == State.LISTENING:
            self.stop_listening()
        else:
            self.start_listening()

    def _on_confirm_answered(self, answer: ConfirmAnswer) -> None:
        dialog, self._dialog = self._dialog, None
        if dialog is not None:
            dialog.deleteLater()
        self.bridge.answer(answer)
        if self.is_running():
            self._set_state(State.WORKING)

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
        stop = "。" if self.lang == "zh" else "."
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

