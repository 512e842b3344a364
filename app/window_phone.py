"""The main window's phone side: the start-up words, the speech channel, the phone, its mirror (frames fetched
and scaled off the GUI thread), taps on the mirror, keys sent to the phone, and the phone's names for the
recogniser. A part of app.main_window.MainWindow (a mixin: it uses the window's widgets and services).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QTimer
from PySide6.QtGui import QKeyEvent

from app.agent import AgentKind
from app.announce import Cue
from app.conversation import EntryKind
from app.failures import describe_failure
from app.keys import KeyForwarder
from app.mirror_view import pil_to_qimage, scaled_frame
from app.phone import PhoneConnection
from app.strings import tr
from app.workers import BackgroundOp
from assistant_core.types import Action

log = logging.getLogger(__name__)


class PhonePart:
    """The phone, its mirror and the start-up words (see the module docstring)."""

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

    def forget_phone(self) -> None:
        """Ctrl+Shift+F without a phone watch (app.phonewatch replaces this): nothing is remembered here."""
        from app.phonewatch import FORGET

        self.announcer.announce(FORGET["nothing"].get(self.lang))

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
