"""A process killed with SIGKILL in the middle of a run loses at most the step in flight, and the
database opens cleanly afterwards (a real child process, a real SQLite file in WAL mode)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from assistant_core.history import HistoryStore

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from assistant_core.confirm import FixedConfirmer
    from assistant_core.history import HistoryStore
    from assistant_core.loop import LoopConfig, run_episode
    from assistant_core.policies import ScriptedPolicy
    from assistant_core.safety import GateContext
    from assistant_core.types import ConfirmAnswer
    from harness.phoneworld import SimDevice, World
    from tests.core_fixtures import RecordingDevice, tool_call

    db, marker = sys.argv[1], Path(sys.argv[2])
    world = World(seed=0)
    device = RecordingDevice(SimDevice(world, screenshots=False))
    up = tool_call("scroll", points=[[500, 600], [500, 300]])
    down = tool_call("scroll", points=[[500, 300], [500, 600]])

    def hang_on_fifth(action):
        if len(device.dispatched) == 4:
            marker.write_text("in flight")
            threading.Event().wait(600)  # the parent kills us here, mid-dispatch

    device.on_act = hang_on_fifth
    history = HistoryStore(db)
    gen = run_episode("scroll around", device=device, policy=ScriptedPolicy.from_replies([up, down] * 10),
                      confirmer=FixedConfirmer(ConfirmAnswer.NO), context=GateContext(), history=history,
                      config=LoopConfig(step_budget=20), sleep=lambda s: None)
    for _ in gen:
        pass
    """
)


def test_sigkill_mid_run_loses_at_most_the_step_in_flight(tmp_path):
    db, marker = tmp_path / "h.db", tmp_path / "marker"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(marker)], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the child ended before reaching the fifth action"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL

    store = HistoryStore(db)
    assert store.set_aside is None  # opened cleanly, not treated as damaged
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    (run,) = store.runs()
    assert run.outcome == "interrupted" and run.ended is None  # never finished: marked at the next start (issue 28)
    steps = store.steps(run.id)
    # Four steps done and marked executed; the fifth recorded (before dispatch) but not executed.
    assert [s.executed for s in steps] == [True, True, True, True, False]
    assert len([k for _, k, _ in store.events(run.id) if k == "acted"]) == 4
    assert [k for k, *_ in store.audit_rows("decision")] == ["decision"] * 5
    # The store is usable again.
    new = store.start_run("after the crash")
    assert store.get_run(new).goal == "after the crash"
