"""Forgetting remembered Wi-Fi phones that no longer answer, in the real app on a real X server (Xvfb)
with real key events (tests/app_xvfb_forget_driver.py): the app starts the adb server on this test's
private port, says the remembered phone is not answering and how to forget it; Ctrl+Shift+F reads the
two silent phones out, the 2 key forgets the second, and "forget the phone" typed into the request box
forgets the other, each said in the window's language."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from app.phonewatch import FORGET
from harness.phonestates import STATES
from tests.app_xvfb import ROOT, xcb_env, xvfb

pytest_plugins = ("tests.adb_owner_fixtures",)


def _dead_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_silent_wifi_phones_are_forgotten_by_key_and_by_request(user_env, lang):
    first, second = _dead_address(), _dead_address()
    with xvfb() as display:
        env = xcb_env(display)
        env.update({k: user_env[k] for k in ("HOME", "ANDROID_USER_HOME", "ANDROID_ADB_SERVER_PORT",
                                              "PHONEBUDDY_ADB_START", "XDG_DATA_HOME")})
        out = subprocess.run([sys.executable, str(ROOT / "tests" / "app_xvfb_forget_driver.py"), lang, first, second],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    report = json.loads(lines[-1])
    assert "error" not in report, (report, out.stderr[-3000:])
    said = report["said"]
    silent = FORGET["silent"].format(what=STATES["remembered_silent"].format(address=first)).get(lang)
    assert report["silent_said"] and silent in said, said
    assert report["listed"], said
    assert report["second_forgotten"] and STATES["forgot"].format(address=second).get(lang) in said, said
    assert report["first_forgotten"] and STATES["forgot"].format(address=first).get(lang) in said, said
    assert report["reconnect_list"] == [] and report["running"] is False
    remembered = json.loads((ROOT / user_env["XDG_DATA_HOME"] / "PhoneBuddy" / "phones.json").read_text())
    assert remembered["wifi"] == []
