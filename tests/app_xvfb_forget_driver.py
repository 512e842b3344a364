"""Run inside Xvfb (QT_QPA_PLATFORM=xcb) by tests/test_app_xvfb_forget.py, in an environment whose adb
server port is private and whose user data folder remembers two Wi-Fi phones where nothing answers: the
app as `phonebuddy` builds its window (app.main.build_window + follow_phones, as main() does), which
starts the adb server and tries the remembered phones. Then, with real X key events (XTEST): Ctrl+Shift+F
reads the silent phones out by number, the 2 key forgets the second; the request box gets "forget the
phone" typed and Return, which forgets the last. Prints one JSON report line.

argv: LANG ADDRESS1 ADDRESS2
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication

from app.main import build_parser, build_window, follow_phones
from app.phone import RememberedPhones
from tests.app_xkeys import XKeyboard


def main() -> int:
    lang, first, second = sys.argv[1:4]
    RememberedPhones().save(wifi=[first, second])
    db = Path(tempfile.mkdtemp(prefix="pb-xvfb-forget-")) / "history.db"
    atexit.register(shutil.rmtree, db.parent, True)  # not left in /tmp after the run
    app = QApplication(sys.argv[:1])
    args = build_parser().parse_args(["--no-speech", "--db", str(db), "--lang", lang])
    window = build_window(args)
    window.show()
    said: list[str] = []
    window.announcer.announced.connect(lambda text, _cue: said.append(text))
    watch = follow_phones(window, app)
    report: dict = {"lang": lang}
    kb = XKeyboard(os.environ["DISPLAY"])

    def wait(pred, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            app.processEvents()
            if pred():
                return True
            time.sleep(0.01)
        return False

    def focus(widget) -> None:
        window.raise_()
        window.activateWindow()
        widget.setFocus()
        wait(lambda: False, 0.4)

    try:
        report["silent_said"] = wait(lambda: any(first in s and "F" in s for s in said), 60)
        focus(window.conversation)
        for key in ("Control_L", "Shift_L"):
            kb.press(key)
        kb.tap("f")
        for key in ("Shift_L", "Control_L"):
            kb.release(key)
        report["listed"] = wait(lambda: any(second in s and first in s for s in said[-1:]), 15)
        kb.tap("2")
        report["second_forgotten"] = wait(lambda: RememberedPhones().load()["wifi"] == [first], 20)
        wait(lambda: any(second in s for s in said[-1:]), 10)
        focus(window.request_box)
        kb.type_text("forget the phone")
        kb.tap("Return")
        report["first_forgotten"] = wait(lambda: RememberedPhones().load()["wifi"] == [], 20)
        wait(lambda: any(first in s for s in said[-1:]), 10)
        report["running"] = window.is_running()
        report["reconnect_list"] = list(watch.owner.remembered) if watch is not None else None
        report["said"] = said
    except Exception as exc:  # reported, so the test shows what happened
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        kb.close()
        if watch is not None:
            watch.stop()
        window.shutdown()
    print(json.dumps(report, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
