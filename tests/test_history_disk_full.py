"""A full disk, a locked database and a killed run (issue 28, build 4).

Before: opening the history on a full disk raised "disk I/O error" (SQLITE_IOERR_SHMSIZE: the -shm file
cannot be created), the store took that for damage and renamed the healthy database (PIN, settings and
history inside) to `.corrupt-…`, then failed again with a traceback; when space came back the app started
empty. Now the kinds are told apart by SQLite's result codes, a file is set aside only after a full
integrity check fails, a full disk opens the database read-only (PIN check, settings and history all
there), the user hears "the disk is full" and what to do, and a run goes on without history.

The disk is a real 1 MiB tmpfs (we are root here); where mounting is not allowed, the mid-run case still
runs with SQLite's own SQLITE_FULL (a `max_page_count` at the current size).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from assistant_core.confirm import FixedConfirmer
from assistant_core.events import Said
from assistant_core.history import HistoryStore
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy
from assistant_core.safety import GateContext
from assistant_core.settings import CaregiverSettings, PinGuard, SettingsStore
from assistant_core.types import ConfirmAnswer
from harness.phoneworld import SimDevice, World
from phonebuddy import run_cli
from tests.core_fixtures import RecordingDevice, tool_call

CHOSEN = CaregiverSettings(allowed_apps=frozenset({"com.android.settings"}), step_budget=12)
PIN = "2468"


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs. The tests using it are marked `tmpfs`: where mounting is not allowed, tests/conftest.py
    deselects them and names them in the summary; a failed mount here is a failure."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.fail(f"mount -t tmpfs failed: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def _set_up(path: Path) -> None:
    store = HistoryStore(path)
    SettingsStore(store).save(CHOSEN, app_labels={"com.android.settings": "Settings"})
    PinGuard(store).set_pin(PIN, n=2**10)
    run = store.start_run("turn on wifi")
    store.finish_run(run, outcome="finished", steps=1)
    store.close()


@pytest.mark.tmpfs
def test_a_full_disk_keeps_the_database_says_so_and_the_pin_still_works(small_disk):
    path = small_disk / "phonebuddy.db"
    _set_up(path)
    filler = _fill(small_disk)
    store = HistoryStore(path)
    assert store.set_aside is None and store.degraded == "full"
    assert not [p for p in small_disk.iterdir() if ".corrupt-" in p.name]
    notices = store.take_notices()
    assert any("The disk is full" in n.en and "free some space" in n.en and "磁盘已满" in n.zh for n in notices)
    loaded = SettingsStore(store).load()
    assert not loaded.tampered and loaded.settings.allowed_apps == CHOSEN.allowed_apps
    guard = PinGuard(store)
    assert not guard.check("0000").ok  # a wrong PIN is still refused, with its message
    assert guard.check(PIN).ok  # and the right one opens the settings, on a full disk
    assert [r.goal for r in store.runs()] == ["turn on wifi"]
    store.close()

    # The command line: the run goes on with the caregiver's apps, and says the disk is full.
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        run_cli.main(["Turn on Wi-Fi", "--device", "sim", "--policy", "noop", "--db", str(path), "--json"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["allowed_apps"] == ["com.android.settings"]
    said = [e.get("text", {}) for e in result["events"] if e.get("kind") == "said"]
    assert any("The disk is full" in json.dumps(s) for s in said), said

    filler.unlink()  # space again: everything is there, and writable
    store = HistoryStore(path)
    assert store.degraded is None and store.set_aside is None
    assert SettingsStore(store).load().settings.allowed_apps == CHOSEN.allowed_apps
    assert PinGuard(store).check(PIN).ok
    assert [r.goal for r in store.runs()] == ["turn on wifi"]
    store.start_run("after")
    assert len(store.runs()) == 2


def _episode_on(store: HistoryStore, on_third):
    world = World(seed=0)
    device = RecordingDevice(SimDevice(world, screenshots=False))
    up = tool_call("scroll", points=[[500, 600], [500, 300]])
    down = tool_call("scroll", points=[[500, 300], [500, 600]])

    def hook(action):
        if len(device.dispatched) == 2:
            on_third()

    device.on_act = hook
    gen = run_episode("scroll around", device=device, policy=ScriptedPolicy.from_replies([up, down] * 3),
                      confirmer=FixedConfirmer(ConfirmAnswer.NO), context=GateContext(), history=store,
                      config=LoopConfig(step_budget=6), sleep=lambda s: None)
    events = []
    try:
        while True:
            events.append(next(gen))
    except StopIteration as done:
        return events, done.value, device


def _check_the_run_went_on(events, result, device):
    said = [e.text for e in events if isinstance(e, Said)]
    notes = [t for t in said if "The disk is full" in t.en]
    assert len(notes) == 1 and "磁盘已满" in notes[0].zh and "goes on" in notes[0].en  # said once
    assert len(device.dispatched) == 6  # every step still ran
    assert str(result.outcome) == "step_budget"


@pytest.mark.tmpfs
def test_a_disk_that_fills_during_a_run_ends_its_history_not_the_run(small_disk):
    path = small_disk / "phonebuddy.db"
    _set_up(path)
    store = HistoryStore(path)
    events, result, device = _episode_on(store, lambda: _fill(small_disk))
    _check_the_run_went_on(events, result, device)
    assert store.degraded == "full"
    assert PinGuard(store).check(PIN).ok  # the PIN check still answers


def test_an_injected_sqlite_full_during_a_run(tmp_path):
    path = tmp_path / "phonebuddy.db"
    _set_up(path)
    store = HistoryStore(path)

    def no_more_pages():  # SQLite's own SQLITE_FULL: the database may not grow past its current size
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")

    events, result, device = _episode_on(store, no_more_pages)
    _check_the_run_went_on(events, result, device)
    store.close()
    again = HistoryStore(path)
    assert again.set_aside is None and PinGuard(again).check(PIN).ok
    assert SettingsStore(again).load().settings.allowed_apps == CHOSEN.allowed_apps
    assert {r.goal for r in again.runs()} == {"turn on wifi", "scroll around"}


HOLD = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA locking_mode=EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT INTO audit (kind, detail) VALUES ('backup', '{}')")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


def test_a_database_locked_by_another_process_is_waited_for_and_kept(tmp_path, monkeypatch):
    path = tmp_path / "phonebuddy.db"
    monkeypatch.setattr("assistant_core.history.LOCK_WAIT_S", 3.0)  # phonebuddy run's wait: 3 s, not 30
    _set_up(path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), "40"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        heard = []
        with pytest.raises(Exception) as raised:
            HistoryStore(path, lock_wait_s=3.0, on_wait=heard.append)
        assert [h.en for h in heard] == ["Another PhoneBuddy is using the history. Waiting for it to finish."]
        assert heard[0].zh.startswith("另一个 PhoneBuddy 正在使用历史记录")
        message = raised.value.message
        assert "still using the history" in message.en and "Nothing was changed" in message.en
        assert "Traceback" not in message.en and message.zh
        # phonebuddy run: waits (said), then stops with the clear message, not exit 0 on a blank database.
        err = io.StringIO()
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            code = run_cli.main(["Turn on Wi-Fi", "--device", "sim", "--policy", "noop", "--db", str(path)])
        assert code == 2 and "another phonebuddy is using the history" in err.getvalue().lower()
        assert "still using the history" in err.getvalue()
    finally:
        holder.kill()
        holder.wait()
    assert sorted(p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name) == []
    store = HistoryStore(path)
    assert store.set_aside is None
    assert SettingsStore(store).load().settings.allowed_apps == CHOSEN.allowed_apps
    assert PinGuard(store).check(PIN).ok


def test_a_truly_damaged_file_is_set_aside_and_the_run_does_not_exit_0(tmp_path):
    path = tmp_path / "phonebuddy.db"
    _set_up(path)
    data = bytearray(path.read_bytes())
    data[0:16] = b"not a database!!"
    path.write_bytes(bytes(data))
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run_cli.main(["Turn on Wi-Fi", "--device", "sim", "--policy", "noop", "--db", str(path)])
    assert code != 0 and "put aside" in err.getvalue()
    assert [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_a_killed_run_is_interrupted_at_the_next_start(tmp_path):
    path = tmp_path / "phonebuddy.db"
    store = HistoryStore(path)
    store.start_run("left hanging")  # no finish_run: as if the process was killed
    store.close()
    (run,) = HistoryStore(path).runs()
    assert run.outcome == "interrupted" and run.ended is None


@pytest.mark.tmpfs
def test_the_app_says_the_disk_is_full_at_start_up_and_keeps_the_caregivers_apps(qtbot, small_disk):
    from app.main import build_parser, build_window
    from app.main_window import AppServices
    from app.phone import open_simulated

    path = small_disk / "phonebuddy.db"
    _set_up(path)
    _fill(small_disk)
    services = AppServices(history=None, simulated_phone=lambda lg: open_simulated(lg))
    window = build_window(build_parser().parse_args(["--demo", "--lang", "zh", "--no-speech", "--db", str(path)]),
                          services=services)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: any("磁盘已满" in a.text for a in window.announcer.log), timeout=10_000)
    assert window.caregiver_settings.allowed_apps == CHOSEN.allowed_apps  # read from the kept file
    assert not [p for p in small_disk.iterdir() if ".corrupt-" in p.name]
