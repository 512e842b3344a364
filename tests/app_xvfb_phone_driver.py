"""Run inside Xvfb (QT_QPA_PLATFORM=xcb) by tests/test_app_xvfb_phone.py, in an environment with no adb
server on its (private) standard port: the app as `phonebuddy --connect ADDRESS --server URL` starts it
(app.main.build_window + follow_phones, as main() does), which must start the adb server, connect the
Wi-Fi phone (PhoneWorld-lite served over the real ADB protocol), announce it, open it, and run a typed
request on it end to end; the policy is an OpenAI-compatible stand-in server that replays the oracle's
replies. Prints one JSON report line.

argv: LANG
"""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication

from app.main import build_parser, build_window, follow_phones
from assistant_core.history import HistoryStore
from assistant_core.policies import action_to_reply
from assistant_core.settings import CaregiverSettings, SettingsStore
from harness.phoneworld.oracle import solve
from harness.phoneworld.phone import SimPhone
from harness.phoneworld.tasks import make_world, registry
from tests.policy_standin import policy_server

TASK = "SettingsTurnOnBluetooth"


def main() -> int:
    lang = sys.argv[1]
    task = registry.get(TASK)
    world, params = make_world(TASK, 0, lang)
    replies = [action_to_reply(a, 1080, 2400, thought="next") for a in solve(TASK, 0, lang).actions()]
    phone = SimPhone(world).start()
    httpd, url, calls = policy_server(replies)
    db = Path(tempfile.mkdtemp(prefix="pb-xvfb-phone-")) / "history.db"
    atexit.register(shutil.rmtree, db.parent, True)  # not left in /tmp after the run
    history = HistoryStore(db)
    SettingsStore(history).save(CaregiverSettings(allowed_apps=frozenset(task.apps), language=lang))
    history.close()

    app = QApplication(sys.argv[:1])
    args = build_parser().parse_args(["--connect", phone.address, "--server", url, "--no-speech", "--db", str(db),
                                      "--lang", lang])
    t0 = time.monotonic()
    window = build_window(args)
    window.show()
    said: list[tuple[float, str]] = []
    window.announcer.announced.connect(lambda text, _cue: said.append((round(time.monotonic() - t0, 2), text)))
    finished: list = []
    window.run_finished.connect(finished.append)
    report: dict = {"lang": lang, "phone_at_start": window.phone is not None}
    watch = follow_phones(window, app)

    def wait(pred, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            app.processEvents()
            if pred():
                return True
            time.sleep(0.01)
        return False

    try:
        report["phone_opened"] = wait(lambda: window.phone is not None, 60)
        report["opened_s"] = round(time.monotonic() - t0, 2)
        if report["phone_opened"]:
            report["phone_label"] = window.phone.label.get(lang)
            window.request_box.setText(task.instruction(params).get(lang))
            window.submit_typed()
            report["run_finished"] = wait(lambda: bool(finished), 120)
            result = finished[0] if finished else None
            report["outcome"] = str(getattr(result, "outcome", result))
            report["success"] = bool(task.is_successful(world, params))
        report["policy_calls"] = len(calls)
        report["said"] = [text for _t, text in said]
        report["said_at"] = [t for t, _text in said]
        report["adb_port"] = watch.owner.address.port if watch is not None else None
        report["server_starts"] = watch.owner.starts if watch is not None else None
    except Exception as exc:  # reported, so the test shows what happened
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if watch is not None:
            watch.stop()
        window.shutdown()
        phone.stop()
        httpd.shutdown()
    print(json.dumps(report, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
