"""`phonebuddy` with no group: the desktop window. Called by phonebuddy.cli as `main(argv) -> int`.

    phonebuddy                      open the window (a real phone if one is attached, else it offers the simulated one)
    phonebuddy --demo               open it on the simulated phone (PhoneWorld-lite) directly
    phonebuddy --lang zh            Chinese interface and voice
    phonebuddy --high-contrast      the high-contrast theme
    phonebuddy --listen-wav F.wav   push-to-talk "hears" this WAV file (machines without a microphone)
    phonebuddy --server URL         run the policy on an OpenAI-compatible server
    phonebuddy --self-check         build the window off-screen, check it, print a report, exit (installers)

Heavy imports (Qt, the phone, speech) happen inside functions, so `phonebuddy --help` stays fast.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from assistant_core import languages as langs

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy", description="PhoneBuddy: an accessible desktop phone assistant.")
    p.add_argument("--demo", action="store_true", help="open on the simulated phone (PhoneWorld-lite)")
    p.add_argument("--lang", choices=langs.choices(), default=None, help="interface and voice language")
    p.add_argument("--high-contrast", action="store_true", help="high-contrast theme (7:1 or better)")
    p.add_argument("--seed", type=int, default=0, help="simulated phone seed")
    p.add_argument("--listen-wav", type=Path, default=None, help="push-to-talk hears this WAV file")
    p.add_argument("--server", default="", help="OpenAI-compatible server address for the policy")
    p.add_argument("--db", type=Path, default=None, help="history database (default: the user data folder)")
    p.add_argument("--no-speech", action="store_true", help="do not load the text-to-speech voice")
    p.add_argument("--self-check", action="store_true", help="build the window off-screen, check it, exit")
    p.add_argument("--connect", default="", metavar="HOST:PORT",
                   help="a Wi-Fi phone (wireless debugging) to connect at start; it is remembered for next time")
    return p


def _speaker_and_earcons():
    """speech.Speaker and earcons on the sound card; (None, None) when this machine cannot speak."""
    from app.voice import EarconPlayer, make_speaker

    try:
        from speech.audio import SoundDeviceSink

        sink = SoundDeviceSink(22_050)
        return make_speaker(sink), EarconPlayer(SoundDeviceSink(22_050))
    except Exception as exc:  # no voice or no sound card: announcements still reach the screen reader
        log.warning("speech output unavailable (%s); announcements go to the screen reader only", exc)
        return None, None


def _voice_input(wav: Path | None):
    from app.voice import MicrophoneVoice, WavFileVoice

    if wav is not None:
        if not wav.is_file():
            raise SystemExit(f"phonebuddy: --listen-wav {wav}: no such file")
        return WavFileVoice(wav)
    try:
        import sounddevice  # noqa: F401 - probing only
    except OSError:
        return None
    try:
        return MicrophoneVoice()
    except (ImportError, OSError):
        return None


def _import_sqlite_utils_without_pandas() -> None:
    """sqlite-utils imports pandas when it is installed (only to map pandas.Timestamp columns, which the
    app never stores); that costs seconds at start-up. Hide pandas during that one import only."""
    if "sqlite_utils" in sys.modules or "pandas" in sys.modules:
        return
    sys.modules["pandas"] = None  # type: ignore[assignment]  # makes `import pandas` raise ImportError
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["pandas"]


def _history(path: Path | None, *, on_wait=None):
    _import_sqlite_utils_without_pandas()
    from assistant_core.history import HistoryStore

    return HistoryStore(path, on_wait=on_wait) if path is not None else HistoryStore(on_wait=on_wait)


def build_window(args: argparse.Namespace, *, services=None):
    """The MainWindow for parsed arguments (a QApplication must exist)."""
    _import_sqlite_utils_without_pandas()
    from PySide6.QtWidgets import QApplication

    from app.agent import AgentKind, choose_agent, weights_present
    from app.main_window import AppServices, MainWindow
    from app.phone import find_real_phone, open_simulated
    from app.settings_flow import load_agent
    from app.theme import HIGH_CONTRAST, STANDARD, apply_theme
    from app.voice import whisper_transcription
    from assistant_core.settings import SettingsStore

    history = None
    loaded = None
    said_first: list = []  # the history's own problems (a full disk, a lock, a file that cannot be opened)
    if services is None or services.history is None:
        try:
            history = _history(args.db, on_wait=said_first.append)
            loaded = SettingsStore(history).load()
        except Exception as error:  # no database: the window still opens, deny-all, and says so
            log.exception("history database unavailable")
            if getattr(error, "message", None) is not None:
                said_first.append(error.message)
    else:
        history = services.history
        try:
            loaded = SettingsStore(history).load()
        except Exception:
            log.exception("stored settings unavailable")
    settings = loaded.settings if loaded is not None else None
    lang = args.lang or (settings.language if settings is not None else "en")
    theme = HIGH_CONTRAST if args.high_contrast else STANDARD
    apply_theme(QApplication.instance(), theme)

    phone = owner = None
    if args.demo:
        phone = open_simulated(lang, seed=args.seed)
    elif not args.self_check:
        owner = _phone_owner(args)
        # Only a server that already answers here: starting one (seconds) happens behind the shown window
        # (app.phonewatch), which then announces it and opens the phone.
        phone = find_real_phone(owner=owner).connection if owner.running() else None
    stored = load_agent(history) if history is not None else None
    preferred = AgentKind.SERVER if args.server else (stored.kind if stored else None)
    server = args.server or (stored.server_address if stored else "")
    profile = settings.model if settings is not None else ""
    simulated = phone is None or phone.is_simulated
    # Looking for weights imports huggingface_hub (seconds): start with what needs no look-up and
    # settle the choice in the background once the window is up.
    agent = choose_agent(preferred, simulated=simulated, have_weights=False, server=server, profile=profile)
    if services is None:
        speaker, earcons = (None, None) if (args.no_speech or args.self_check) else _speaker_and_earcons()
        services = AppServices(
            speaker=speaker,
            earcons=earcons,
            voice_input=_voice_input(args.listen_wav),
            transcriber=whisper_transcription(_recogniser(history)),
            history=history,
            simulated_phone=lambda lg: open_simulated(lg, seed=args.seed),
        )
    window = MainWindow(lang=lang, theme=theme, services=services, phone=phone, agent=agent)
    window.phone_owner = owner
    if history is not None:
        said_first.extend(history.take_notices())
    if loaded is not None or said_first:
        window.startup_problems = said_first + (settings_problems(loaded) if loaded is not None else [])
    if agent.kind is not AgentKind.SERVER and not args.self_check:
        from app.workers import BackgroundOp

        def settle(have: bool) -> None:
            if have and not window.is_running():
                window.set_agent(choose_agent(preferred, simulated=simulated, have_weights=True, server=server,
                                              profile=profile))

        BackgroundOp(lambda: weights_present(profile or None), on_done=settle, parent=window).start()
    if settings is not None:
        from dataclasses import replace

        window.apply_settings(replace(settings, language=lang), agent)  # --lang wins over the stored one
        if args.lang and args.lang != settings.language and history is not None:
            from app.settings_flow import save_language

            save_language(history, args.lang)  # and is kept for the next start
    if not args.self_check:
        warm_voice(window)
    return window


def _recogniser(history) -> str:
    """The caregiver's speech recogniser (speech.recognisers; base when none was chosen)."""
    from speech.recognisers import DEFAULT, load_choice

    return load_choice(history) if history is not None else DEFAULT


def settings_problems(loaded) -> list:
    """The problems of a settings load (assistant_core.settings.SettingsLoad) that the user must hear at
    start-up: stored values that were not valid and were replaced by safe ones, a settings change made
    outside the app, a damaged history file. Not "not set up yet": the setup wizard covers that."""
    from assistant_core.settings import MSG

    return [p for p in loaded.problems if p != MSG["missing"]]


def warm_voice(window):
    """Load the voice of the window's language on a background thread (speech.tts.VoiceRouter.warm_up:
    Kokoro's first load takes seconds), after the caregiver's voice choice was applied, so the first
    sentence is not kept waiting and the window is not either. The thread, or None without a voice."""
    router = getattr(window.services.speaker, "router", None)
    if router is None or not hasattr(router, "warm_up"):
        return None
    try:
        return router.warm_up(window.lang)
    except Exception:  # a voice that cannot even start loading is found (and said) at its first sentence
        log.exception("could not start warming the voice")
        return None


def _phone_owner(args: argparse.Namespace):
    """The adb server owner for the app (harness.adbserver), with the remembered Wi-Fi phones and the one
    given by --connect (which is remembered from now on)."""
    from app.phone import RememberedPhones
    from harness.adbserver import AdbServerOwner

    remembered = RememberedPhones()
    wifi = remembered.load()["wifi"]
    address = getattr(args, "connect", "")
    if address:
        address = address if ":" in address else f"{address}:5555"
        wifi = [address, *[a for a in wifi if a != address]]
        remembered.save(wifi=wifi)
    return AdbServerOwner(remembered=wifi, socket_timeout=5.0)


def self_check(window) -> list[str]:
    """Problems found in a freshly built window (empty when all is well)."""
    from app.audit import audit_widget_tree

    return [str(p) for p in audit_widget_tree(window)]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    if args.self_check:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from app.selfcheck import main as full_self_check  # every installed part (installers), then exit 0/1

        return full_self_check(args, build_window)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PhoneBuddy")
    window = build_window(args)
    window.show()
    if args.self_check:
        app.processEvents()
        problems = self_check(window)
        print(f"phonebuddy self-check: window built in {time.perf_counter() - t0:.2f} s")
        for p in problems:
            print(f"  problem: {p}")
        print("phonebuddy self-check:", "OK" if not problems else f"{len(problems)} problem(s)")
        window.shutdown()
        return 0 if not problems else 1
    from app.first_run import start as on_started  # the setup wizard on a bundle's first run; start-up probe

    on_started(window)
    follow_phones(window, app)
    return int(app.exec())


def follow_phones(window, app):
    """After window.show(): the phone watch (app.phonewatch) for a window on a real phone, which starts
    the adb server if none answers and announces every plug, unplug and state change. None on --demo."""
    if getattr(window, "phone_owner", None) is None:
        return None
    from app.phonewatch import attach_phone_watch

    watch = attach_phone_watch(window, window.phone_owner)
    app.aboutToQuit.connect(watch.stop)
    return watch
