"""Screenshots of the main window, the confirmation dialog and the caregiver settings, in English and
Chinese, for the README (docs/screenshots/) and for the screenshot test.

    python scripts/app_screenshots.py [OUT_DIR] [--high-contrast]   # default OUT_DIR: docs/screenshots
    QT_QPA_PLATFORM=xcb DISPLAY=:99 python scripts/app_screenshots.py /tmp/shots

Runs the real window on PhoneWorld-lite with the scripted demonstration: a request ("Call Sophie
Tang") is carried to its confirmation dialog, which is captured while it waits, then answered "no".
Prints one JSON line: the files written with their sizes.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _pump(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _wait(app, predicate, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("the window did not reach the expected state")
        app.processEvents()
        time.sleep(0.01)


def capture(out_dir: Path, *, high_contrast: bool = False) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from app.agent import AgentChoice, AgentKind
    from app.main_window import AppServices, MainWindow
    from app.phone import open_simulated
    from app.settings_dialog import CaregiverSettingsDialog
    from app.theme import HIGH_CONTRAST, STANDARD, apply_theme
    from assistant_core.history import HistoryStore
    from assistant_core.settings import CaregiverSettings
    from assistant_core.types import ConfirmAnswer

    app = QApplication.instance() or QApplication([])
    theme = HIGH_CONTRAST if high_contrast else STANDARD
    apply_theme(app, theme)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    suffix = "_hc" if high_contrast else ""
    for lang in ("en", "zh"):
        window = MainWindow(lang=lang, theme=theme, services=AppServices(history=HistoryStore.in_memory()),
                            phone=open_simulated(lang), agent=AgentChoice(AgentKind.DEMO))
        window.resize(1200, 860)
        window.show()
        request = "Call Sophie Tang" if lang == "en" else "给唐苏菲打电话"
        window.request_box.setText(request)
        window.submit_typed()
        _wait(app, lambda w=window: w._dialog is not None and w._dialog.isVisible())
        _pump(app, 0.8)  # let the mirror show the call screen
        path = out_dir / f"main_window_{lang}{suffix}.png"
        window.grab().save(str(path))
        written.append(path)
        path = out_dir / f"confirmation_{lang}{suffix}.png"
        window._dialog.grab().save(str(path))
        written.append(path)
        window._dialog.answer_with(ConfirmAnswer.NO)
        _wait(app, lambda w=window: not w.is_running())
        installed = window.phone.device.installed_apps()
        allowed = frozenset(list(installed)[:4])
        dialog = CaregiverSettingsDialog(CaregiverSettings(allowed_apps=allowed, language=lang), window.agent, installed,
                                         lang=lang, voices=["en_US-joe-medium"],
                                         model_names=["phonebuddy-0.8b", "phonebuddy-4b"], parent=window)
        dialog.show()
        _pump(app, 0.3)
        path = out_dir / f"caregiver_settings_{lang}{suffix}.png"
        dialog.grab().save(str(path))
        written.append(path)
        dialog.close()
        window.shutdown()
        window.close()
        _pump(app, 0.2)
    return written


def main(argv: list[str]) -> int:
    high_contrast = "--high-contrast" in argv
    rest = [a for a in argv if a != "--high-contrast"]
    out_dir = Path(rest[0]) if rest else ROOT / "docs" / "screenshots"
    files = capture(out_dir, high_contrast=high_contrast)
    print(json.dumps({str(p): p.stat().st_size for p in files}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
