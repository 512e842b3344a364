"""The app on a real X server (Xvfb), started with no adb server running: it starts one (through the real
adb binary, on this test's private port, with HOME in a temporary folder), connects the Wi-Fi phone it
was given (--connect; PhoneWorld-lite over the real ADB protocol), says so in the window's language,
opens it, and a typed request runs on it end to end (tests/app_xvfb_phone_driver.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.phonestates import STATES
from tests.app_xvfb import ROOT, xcb_env, xvfb

pytest_plugins = ("tests.adb_owner_fixtures",)


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_app_starts_the_server_finds_the_wifi_phone_and_runs_a_request(user_env, server_pids, lang):
    port = int(user_env["ANDROID_ADB_SERVER_PORT"])
    with xvfb() as display:
        env = xcb_env(display)
        env.update({k: user_env[k] for k in ("HOME", "ANDROID_USER_HOME", "ANDROID_ADB_SERVER_PORT",
                                              "PHONEBUDDY_ADB_START", "XDG_DATA_HOME")})
        out = subprocess.run([sys.executable, str(ROOT / "tests" / "app_xvfb_phone_driver.py"), lang], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=300)
        servers = server_pids(port)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, (out.returncode, out.stdout[-2000:], out.stderr[-3000:])
    report = json.loads(lines[-1])
    assert "error" not in report, (report, out.stderr[-3000:])
    assert report["phone_at_start"] is False  # no server answered when the window was built
    assert report["phone_opened"], report
    assert report["server_starts"] == 1 and len(servers) == 1 and report["adb_port"] == port
    said = report["said"]
    assert said.count(STATES["server_starting"].get(lang)) == 1, said
    connected = {"en": "A phone was connected: PhoneWorld Lite ending in", "zh": "有手机连上了：PhoneWorld Lite"}[lang]
    first_connected = next(i for i, s in enumerate(said) if s.startswith(connected))
    assert said.index(STATES["server_starting"].get(lang)) < first_connected, said
    assert "PhoneWorld Lite" in report["phone_label"]
    assert report["run_finished"] and report["outcome"] == "finished", report
    assert report["success"], report  # done on the phone and checked there (policy steps or the fast path)
    # The remembered Wi-Fi phone was written to the user's data folder (for the next start).
    remembered = json.loads((ROOT / user_env["XDG_DATA_HOME"] / "PhoneBuddy" / "phones.json").read_text())
    assert remembered["wifi"] and remembered["wifi"][0].startswith("127.0.0.1:")
