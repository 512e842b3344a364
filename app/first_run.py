"""What happens when the installed app starts: the first-run setup wizard, and a start-up probe.

- `FirstRun(folder)`: a marker file `first-run-done` in the user's data folder. `pending()` is True
  until `mark_done()`. An installed bundle (`PHONEBUDDY_BUNDLE=1`, set by installers/launcher.py) opens
  app.setup_wizard.SetupWizard once the main window is on screen, the first time it starts; from a
  source checkout the wizard opens only with `PHONEBUDDY_FIRST_RUN=1` (so developers and tests are not
  interrupted). The marker is written when the wizard closes, finished or cancelled: the caregiver can
  reopen it from Settings at any time. With a screen reader running, the window first asks "Which
  voice?" (app.channel_dialog); the wizard opens once that is answered, and takes the keyboard.
- `StartupProbe`: with `PHONEBUDDY_STARTUP_PROBE=1`, prints `phonebuddy-probe: window-shown T` (seconds
  since the process started, measured from `PHONEBUDDY_T0` when the launcher of the measurement set it),
  then `phonebuddy-probe: wizard-shown T` if the wizard opened, and quits the app after
  `PHONEBUDDY_PROBE_QUIT_S` seconds (default 2). bench/bench_bundle.py and the installer tests use it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

MARKER = "first-run-done"
_IMPORTED = time.perf_counter()


def default_folder() -> Path:
    import platformdirs

    from assistant_core.history import APP_NAME

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class FirstRun:
    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_folder()

    @property
    def marker(self) -> Path:
        return self.folder / MARKER

    def pending(self) -> bool:
        return not self.marker.exists()

    def mark_done(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.marker.write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"), encoding="utf-8")
        except OSError:
            log.warning("could not record that setup ran (%s); it will be offered again", self.marker)


def wizard_wanted(env: dict[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get("PHONEBUDDY_FIRST_RUN") == "0":
        return False
    return env.get("PHONEBUDDY_BUNDLE") == "1" or env.get("PHONEBUDDY_FIRST_RUN") == "1"


def _since_start() -> float:
    t0 = os.environ.get("PHONEBUDDY_T0")
    if t0:
        try:
            return time.time() - float(t0)
        except ValueError:
            pass
    return time.perf_counter() - _IMPORTED


class StartupProbe:
    """Prints start-up milestones for the benchmark and tests (see the module docstring)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def mark(self, what: str) -> None:
        if self.enabled:
            print(f"phonebuddy-probe: {what} {_since_start():.3f}", flush=True)


def start(window, *, first_run: FirstRun | None = None, env: dict[str, str] | None = None) -> None:
    """Call right after `window.show()` (before the event loop): schedules the probe and, on the first
    run of an installed bundle, the setup wizard."""
    from PySide6.QtCore import QTimer

    env = os.environ if env is None else env
    probe = StartupProbe(env.get("PHONEBUDDY_STARTUP_PROBE") == "1")
    QTimer.singleShot(0, lambda: probe.mark("window-shown"))
    if probe.enabled:
        quit_s = float(env.get("PHONEBUDDY_PROBE_QUIT_S", "2"))
        QTimer.singleShot(int(quit_s * 1000), _quit_all)
    fr = first_run or FirstRun()
    if wizard_wanted(env) and fr.pending():
        QTimer.singleShot(50, lambda: open_wizard(window, fr, probe))
    elif probe.enabled:
        probe.mark("no-wizard")


def _quit_all() -> None:
    from PySide6.QtWidgets import QApplication

    for w in QApplication.topLevelWidgets():
        if w.isVisible():
            w.close()
    QApplication.instance().quit()


def open_wizard(window, first_run: FirstRun, probe: StartupProbe | None = None):
    """Open the setup wizard (non-modal, so the window and the screen reader stay usable), in the
    window's language, with its announcer and push-to-talk (app.settings_flow.make_setup_wizard);
    record the first run when it closes. While the window's "Which voice?" question is open, it opens
    when that is answered (returns None then)."""
    from app.settings_flow import make_setup_wizard

    question = getattr(window, "channel_dialog", None)
    if question is not None and question.isVisible():
        # "Which voice?" is being asked (a screen reader runs): the wizard waits for the answer, so its
        # welcome is neither read over the question nor heard after it, and it gets the keyboard once
        # the question closes (instead of the main window, which the dialog would hand it back to).
        from PySide6.QtCore import QTimer

        question.finished.connect(lambda _code: QTimer.singleShot(0, lambda: open_wizard(window, first_run, probe)))
        return None
    wizard = make_setup_wizard(window)
    wizard.finished.connect(lambda _code: first_run.mark_done())
    wizard.show()
    wizard.raise_()
    wizard.activateWindow()
    if probe is not None:
        probe.mark("wizard-shown")
    log.info("first run: setup wizard opened (%s)", sys.platform)
    return wizard
