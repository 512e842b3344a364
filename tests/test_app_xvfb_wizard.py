"""The first-run wizard as a screen-reader user meets it (issue 29, item 3), under Xvfb with the AT-SPI bus
(its ScreenReaderEnabled flag on, as Orca sets it) and real X key events (tests/app_xvfb_wizard_driver.py):
"Which voice?" is asked first, with our own voice silent (no audio reaches the sink) and no welcome read
until it is answered; V answers it; the wizard then has the keyboard, and Enter on every page (the focused
button: Next, then Finish) reaches Finish with the focus inside the wizard all the way. The screen reader
(tests/app_atspi_reader.py --listen) hears the question before the welcome."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from app.strings import tr
from tests.app_xvfb import ATSPI_BUS_UP, ROOT, xcb_env, xvfb

SYSTEM_PYTHON = "/usr/bin/python3"
SCREEN_READER_ON = ("gdbus call --session --dest org.a11y.Bus --object-path /org/a11y/bus --method "
                    "org.freedesktop.DBus.Properties.Set org.a11y.Status ScreenReaderEnabled '<true>'")


def run_first_start(tmp_path: Path, lang: str, answer: str) -> dict:
    assert Path("/usr/libexec/at-spi-bus-launcher").exists(), "at-spi2-core is installed by scripts/dev.sh"
    heard = tmp_path / "announcements.jsonl"
    driver = [sys.executable, str(ROOT / "tests" / "app_xvfb_wizard_driver.py"), lang, str(tmp_path / "data"), str(heard), answer]
    listener = [SYSTEM_PYTHON, str(ROOT / "tests" / "app_atspi_reader.py"), "60", "--listen", str(heard), "75"]
    script = (
        "/usr/libexec/at-spi-bus-launcher --launch-immediately & bus=$!; " + ATSPI_BUS_UP +
        f"{SCREEN_READER_ON} >/dev/null; "
        f"{shlex.join(listener)} & lid=$!; "
        f"{shlex.join(driver)} > {tmp_path}/driver.log 2>&1; rc=$?; kill $lid $bus; wait; exit $rc"
    )
    with xvfb() as display:
        env = xcb_env(display, QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", NO_AT_BRIDGE="0", HOME=str(tmp_path),
                      XDG_DATA_HOME=str(tmp_path / "xdg-data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        proc = subprocess.run(["dbus-run-session", "--", "bash", "-c", script], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=240)
    log = (tmp_path / "driver.log").read_text(errors="replace")
    line = next((ln for ln in log.splitlines() if ln.startswith("REPORT ")), None)
    assert line is not None, (proc.returncode, log[-4000:], proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads(line[len("REPORT "):])
    report["reader"] = [json.loads(ln)["text"] for ln in heard.read_text(encoding="utf-8").splitlines()
                        if ln.strip() and "text" in json.loads(ln)] if heard.exists() else []
    return report


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.parametrize(("lang", "answer"), [("en", "v"), ("zh", "v"), ("en", "s")])
def test_the_voice_question_first_then_enter_on_every_page_reaches_finish_inside_the_wizard(tmp_path, lang, answer):
    report = run_first_start(tmp_path, lang, answer)
    shown = {k: v for k, v in report.items() if k not in ("audio",)}
    print(json.dumps(shown, ensure_ascii=False))
    question = tr("channel_question", lang, reader="\x00").split("\x00")[0]
    welcome = tr("wiz_welcome_title", lang)
    said = report["said"]
    # "Which voice?" is asked first: nothing of the wizard is said, or open, before it is answered.
    assert report["asked"] is not None, shown
    first_question = next(i for i, (_t, text) in enumerate(said) if text.startswith(question))
    first_welcome = next((i for i, (_t, text) in enumerate(said) if welcome in text), None)
    assert first_welcome is not None and first_welcome > first_question, shown
    assert all(t >= report["t_v"] for t, text in said if welcome in text), shown
    assert not report["before_v"]["wizard"], ("the wizard opened behind the question", shown)
    # Our own voice is silent until the question is answered (the screen reader reads it), and after it
    # only if the answer was V.
    assert not [t for t in report["audio"] if t < report["t_v"]], ("our voice spoke over the question", shown)
    spoke_after = [t for t in report["audio"] if t > report["t_v"]]
    assert bool(spoke_after) == (answer == "v"), shown
    assert report["channel"] == ("own_voice" if answer == "v" else "screen_reader")
    # After the answer the wizard has the keyboard, and Enter on every page (the focused button: Next, then
    # Finish) reaches Finish with the focus inside the wizard all the way.
    assert report["wizard_opened"] is not None, shown
    steps = report["steps"]
    assert [s["before"]["page"] for s in steps] == [0, 1, 2, 3, 4], shown
    for step in steps:
        assert step["before"]["active"] == "setupWizard" and step["before"]["focus_window"] == "setupWizard", shown
    for step in steps[1:-1]:
        assert step["before"]["focus_text"] == tr("wiz_next", lang), shown
    assert steps[-1]["before"]["focus_text"] == tr("wiz_finish", lang), shown
    for step in steps[:-1]:
        assert step["after"] is not None and step["after"]["focus_window"] == "setupWizard", shown
    assert report["results"] == [1] and report["marker"], shown
    # The screen reader heard the question first; left to it (S), it then hears the welcome, after it.
    reader = report["reader"]
    q = next((i for i, text in enumerate(reader) if text.startswith(question)), None)
    w = next((i for i, text in enumerate(reader) if welcome in text), None)
    assert q == 0, reader
    if answer == "s":
        assert w is not None and w > q, reader
    else:
        assert w is None, reader  # our own voice reads it, and only it (never two voices)
