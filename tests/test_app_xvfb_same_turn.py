"""One request, two front ends, one assistant (phonebuddy.assistant): spoken to the window under a real X
server (Space held with real X key events while the recogniser hears it) and given to `phonebuddy run`, the
same request gives the same loop events, the same ending and the same history rows (the run record, its
steps, its events and the conversation, the run id and set-up labels aside). The requests include a "do
not" request, whose whole ending is "OK, I won't." (never "Done. ... I won't.")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assistant_core.endings import WONT
from assistant_core.history import HistoryStore
from phonebuddy import run_cli as cli
from tests.app_xvfb import ROOT, xcb_env, xvfb

REQUESTS = {"en": ("Switch Bluetooth on please", "Turn off airplane mode? No, leave it"),
            "zh": ("电池还有多少电", "别打开飞行模式")}  # the window once ran the airplane-mode demo for the latter


def rows(db, run_id: int) -> dict:
    store = HistoryStore(db)
    db_ = store._open()
    run = db_["runs"].get(run_id)
    out = {
        "run": {k: run[k] for k in ("goal", "lang", "outcome", "summary", "steps", "verification")},
        "steps": [(r["idx"], r["action"], r["verdict"], r["rule"]) for r in db_["steps"].rows_where(
            "run_id = ?", [run_id], order_by="idx")],
        "events": [(r["seq"], r["step"], r["kind"]) for r in db_["events"].rows_where(
            "run_id = ?", [run_id], order_by="seq")],
        "conversation": [(r["role"], r["text"]) for r in db_["conversation"].rows_where(
            "run_id = ?", [run_id], order_by="id")],
    }
    store.close()
    return out


@pytest.mark.xvfb
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_window_and_phonebuddy_run_give_the_same_turn(lang, tmp_path, capsys):
    asked = REQUESTS[lang]
    app_db = tmp_path / "app.db"
    with xvfb() as display:
        proc = subprocess.run([sys.executable, str(ROOT / "tests" / "app_xvfb_same_turn_driver.py"), lang, str(app_db),
                               *asked], cwd=ROOT, env=xcb_env(display), capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    report = json.loads(lines[-1])
    assert "error" not in report, (report, proc.stderr[-3000:])
    assert len(report["runs"]) == len(asked)
    for goal, shown in zip(asked, report["runs"], strict=True):
        assert shown["routes"] == ["request"], shown  # heard once, routed once
        capsys.readouterr()
        code = cli.main([goal, "--device", "sim", "--policy", "noop", "--lang", lang, "--confirm", "no",
                         "--db", str(tmp_path / "cli.db"), "--json"])
        out = json.loads(capsys.readouterr().out)
        assert code == cli.EXIT_DONE, out
        cli_events = [e["kind"] for e in out["events"] if e["kind"] != "observed"]
        assert shown["events"] == cli_events, (shown, out["steps"])
        assert shown["ending"] == out["summary"]
        assert rows(app_db, shown["run_id"]) == rows(tmp_path / "cli.db", out["run_id"])
    said_no = report["runs"][1]
    assert said_no["ending"] == WONT.get(lang)  # only the truthful line
