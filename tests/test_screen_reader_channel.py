"""Two voices at once for screen-reader users: when a screen reader runs, the first start asks whether
PhoneBuddy speaks with its own voice or leaves speech to the screen reader; the choice is kept, F11
switches it, and every message goes to the chosen channel once. The AT-SPI ScreenReaderEnabled status is
read from a real accessibility bus."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from app.agent import AgentChoice, AgentKind
from app.announce import Announcer
from app.main_window import AppServices, MainWindow
from app.phone import open_simulated
from app.screen_reader import SpeechChannel, load_channel
from app.strings import tr
from assistant_core.history import HistoryStore
from tests.app_xvfb import ATSPI_BUS_UP, ROOT


class Speaker:
    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def stop(self) -> None:
        pass


@pytest.mark.parametrize(("channel", "spoken", "to_reader"), [
    (SpeechChannel.OWN_VOICE, True, False), (SpeechChannel.SCREEN_READER, False, True), (SpeechChannel.BOTH, True, True),
])
def test_each_message_goes_to_the_chosen_channel(qtbot, channel, spoken, to_reader):
    label = QLabel()
    qtbot.addWidget(label)
    speaker = Speaker()
    announcer = Announcer(label, speaker=speaker)
    announcer.set_channel(channel)
    item = announcer.announce("Step 1: Open Phone.")
    assert item.spoken is spoken and item.to_screen_reader is to_reader
    assert speaker.said == (["Step 1: Open Phone."] if spoken else [])
    assert label.text() == "Step 1: Open Phone."  # shown either way
    announcer.repeat_last()
    assert len(speaker.said) == (2 if spoken else 0)


def _window(qtbot, history, speaker, reader):
    services = AppServices(speaker=speaker, history=history, extra={"detect_screen_reader": lambda: reader})
    window = MainWindow(lang="en", services=services, phone=open_simulated("en"), agent=AgentChoice(AgentKind.DEMO))
    qtbot.addWidget(window)
    window.show()
    return window


def test_the_first_start_with_a_screen_reader_asks_and_keeps_the_answer(qtbot):
    history, speaker = HistoryStore.in_memory(), Speaker()
    window = _window(qtbot, history, speaker, "Orca")
    qtbot.waitUntil(lambda: window.channel_dialog is not None and window.channel_dialog.isVisible(), timeout=5000)
    assert window.announcer.log[-1].text == tr("channel_question", "en", reader="Orca")
    qtbot.keyClick(window.channel_dialog, Qt.Key.Key_S)
    assert load_channel(history) is SpeechChannel.SCREEN_READER
    spoken_before = len(speaker.said)
    qtbot.waitUntil(lambda: tr("demo_note", "en") in [a.text for a in window.announcer.log], timeout=5000)
    assert len(speaker.said) == spoken_before  # from now on only the screen reader speaks
    assert all(a.to_screen_reader for a in list(window.announcer.log)[-2:])
    window.close()
    again = _window(qtbot, history, Speaker(), "Orca")  # the next start does not ask again
    qtbot.waitUntil(lambda: tr("demo_note", "en") in [a.text for a in again.announcer.log], timeout=5000)
    assert again.channel_dialog is None and again.announcer.channel == "screen_reader"


def test_no_screen_reader_no_question_and_f11_switches(qtbot):
    history, speaker = HistoryStore.in_memory(), Speaker()
    window = _window(qtbot, history, speaker, None)
    qtbot.waitUntil(lambda: tr("demo_note", "en") in [a.text for a in window.announcer.log], timeout=5000)
    assert window.channel_dialog is None and window.announcer.channel == "both"
    window.next_channel()  # F11
    assert load_channel(history) is SpeechChannel.OWN_VOICE
    assert window.announcer.log[-1].text == tr("channel_now_own_voice", "en") and not window.announcer.log[-1].to_screen_reader
    window.next_channel()
    assert load_channel(history) is SpeechChannel.SCREEN_READER and not window.announcer.log[-1].spoken
    assert "F11" in " ".join(__import__("app.shortcuts", fromlist=["help_lines"]).help_lines("en"))


PROBE = """
/usr/libexec/at-spi-bus-launcher --launch-immediately & bus=$!; """ + ATSPI_BUS_UP + """
{py} -c "{code}"
gdbus call --session --dest org.a11y.Bus --object-path /org/a11y/bus \\
  --method org.freedesktop.DBus.Properties.Set org.a11y.Status ScreenReaderEnabled '<true>' > /dev/null
{py} -c "{code}"
kill $bus
"""


@pytest.mark.xvfb
def test_the_at_spi_screen_reader_status_is_read_from_the_bus(tmp_path):
    import os

    assert Path("/usr/libexec/at-spi-bus-launcher").exists(), "at-spi2-core is installed by scripts/dev.sh"
    code = ("from PySide6.QtCore import QCoreApplication; app = QCoreApplication([]); "
            "from app.screen_reader import detect_screen_reader; print('READER', detect_screen_reader())")
    # The status is kept by dconf: a private config folder, so the machine's own setting is not touched.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path), HOME=str(tmp_path))
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    out = subprocess.run(["dbus-run-session", "--", "bash", "-c", PROBE.format(py=sys.executable, code=code)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    readers = [line.split(" ", 1)[1] for line in out.stdout.splitlines() if line.startswith("READER")]
    assert readers == ["None", "a screen reader (AT-SPI)"], (out.stdout, out.stderr[-1500:])
