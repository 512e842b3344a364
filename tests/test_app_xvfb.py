"""Under a real X server (Xvfb): a screen reader's view of the running app through the AT-SPI bus, and
screenshots of the main window, the confirmation dialog and the caregiver settings in both languages."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from app.strings import APP
from tests.app_xvfb import ATSPI_BUS_UP, ROOT, xcb_env, xvfb

SYSTEM_PYTHON = "/usr/bin/python3"


def read_over_atspi(tmp_path, lang: str, *reader_args: str) -> dict:
    """Start the app and the AT-SPI bus under Xvfb and run the screen-reader side (app_atspi_reader.py)."""
    assert Path("/usr/libexec/at-spi-bus-launcher").exists(), "at-spi2-core is installed by scripts/dev.sh"
    reader = ROOT / "tests" / "app_atspi_reader.py"
    app_cmd = [sys.executable, "-m", "app", "--demo", "--no-speech", "--lang", lang, "--db", str(tmp_path / "h.db")]
    script = (
        "/usr/libexec/at-spi-bus-launcher --launch-immediately & bus=$!; " + ATSPI_BUS_UP +
        f"{shlex.join(app_cmd)} > {tmp_path}/app.log 2>&1 & appid=$!; "
        f"{SYSTEM_PYTHON} {reader} 60 {shlex.join(reader_args)}; rc=$?; kill $appid; wait $appid; kill $bus; exit $rc"
    )
    with xvfb() as display:
        env = xcb_env(display, QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", NO_AT_BRIDGE="0")
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        out = subprocess.run(["dbus-run-session", "--", "bash", "-c", script], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=180)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    assert lines, (out.stdout[-2000:], out.stderr[-2000:], (tmp_path / "app.log").read_text()[-2000:])
    return json.loads(lines[-1])


@pytest.mark.xvfb
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_screen_reader_is_told_what_the_app_announces(tmp_path, lang):
    """The help button pressed through AT-SPI (as a screen reader user does): the shortcut list reaches
    the accessibility bus as announcement events, one per line, which is what Orca/NVDA speak."""
    from app.shortcuts import help_lines

    report = read_over_atspi(tmp_path, lang, "--press", APP.get("help", lang))
    assert report["found"] and report["pressed"], report
    said = report["announcements"]
    assert said, report
    lines = help_lines(lang)
    # One announcement per shortcut (the screen reader pauses between them), in order.
    heard = said[-len(lines):]
    assert heard[0].startswith(APP.get("shortcuts_intro", lang)), said
    assert all(h.startswith(line) for h, line in zip(heard, lines, strict=True)), heard


@pytest.mark.xvfb
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_screen_reader_finds_the_main_controls_over_atspi(tmp_path, lang):
    report = read_over_atspi(tmp_path, lang)
    assert report["found"], report
    nodes = report["nodes"]
    by_name = {name: role for role, name, _desc in nodes}
    assert any(role == "frame" and APP.get("window_title", lang) in name for role, name, _ in nodes), nodes[:3]
    for key, role in (("talk", "push button"), ("send", "push button"), ("stop", "push button"),
                      ("settings", "push button"), ("help", "push button"), ("request", "text"),
                      ("send_keys", "check box")):
        name = APP.get(key, lang)
        assert by_name.get(name) == role, (key, name, sorted(by_name)[:60])
    assert APP.get("conversation", lang) in by_name
    assert APP.get("mirror", lang) in by_name
    described = {name: desc for _role, name, desc in nodes}
    assert described[APP.get("talk", lang)] == APP.get("talk_desc", lang)
    unnamed_buttons = [n for n in nodes if n[0] == "push button" and not n[1].strip()]
    assert unnamed_buttons == []


@pytest.mark.xvfb
def test_screenshots_in_both_languages(tmp_path):
    with xvfb() as display:
        out = subprocess.run([sys.executable, "scripts/app_screenshots.py", str(tmp_path)], cwd=ROOT,
                             env=xcb_env(display), capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    files = json.loads(out.stdout.strip().splitlines()[-1])
    names = {Path(p).name for p in files}
    for lang in ("en", "zh"):
        assert {f"main_window_{lang}.png", f"confirmation_{lang}.png", f"caregiver_settings_{lang}.png"} <= names
    for path in files:
        image = Image.open(path).convert("RGB")
        assert image.width >= 500 and image.height >= 200, path
        colours = image.resize((64, 64)).getcolors(64 * 64)
        assert colours is None or len(colours) > 8, f"{path} looks blank"
    # The two languages really differ (the Chinese screenshot is not the English one).
    en = Image.open(tmp_path / "main_window_en.png").convert("L").resize((200, 150))
    zh = Image.open(tmp_path / "main_window_zh.png").convert("L").resize((200, 150))
    assert sum(abs(a - b) for a, b in zip(en.getdata(), zh.getdata(), strict=True)) > 10_000
