"""The agent loop's own overhead per step: everything run_episode does besides the policy and the phone.

Runs a scripted policy (scrolls up and down, parsed by the real parser) on PhoneWorld-lite in-process
and times each step's wall time, the time inside policy.propose and the time inside the device
(observe/act/foreground). Overhead = step time - policy - device: the gate, the loop guard, the events,
and, when enabled, the history store (fsync'd step rows, events, thumbnails).

    .venv/bin/python bench/bench_loop.py [--steps 200]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from assistant_core.confirm import FixedConfirmer
from assistant_core.history import HistoryStore
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import ScriptedPolicy, action_to_reply
from assistant_core.safety import GateContext
from assistant_core.types import Action, ConfirmAnswer
from harness.phoneworld import SimDevice, World


class Timed:
    """Accumulates the time spent inside the wrapped object's methods."""

    def __init__(self, inner):
        self.inner = inner
        self.spent = 0.0

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - t0

        return call


def measure(steps: int, *, history: bool, screenshots: bool, durable_dir: Path) -> dict[str, float]:
    world = World(seed=0)
    device = Timed(SimDevice(world, screenshots=screenshots))
    up = action_to_reply(Action.scroll(540, 1500, 540, 900), 1080, 2400, thought="scroll")
    down = action_to_reply(Action.scroll(540, 900, 540, 1500), 1080, 2400, thought="scroll back")
    policy = Timed(ScriptedPolicy.from_replies([up, down] * (steps // 2 + 1)))
    store = HistoryStore(durable_dir / f"bench-{history}-{screenshots}.db") if history else None
    gen = run_episode("scroll", device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.NO),
                      context=GateContext(allowed_apps=frozenset({"com.android.settings"})), history=store,
                      config=LoopConfig(step_budget=steps, thumbnails=screenshots), sleep=lambda s: None)
    t0 = time.perf_counter()
    events = 0
    for _ in gen:
        events += 1
    total = time.perf_counter() - t0
    if store is not None:
        store.close()
    overhead = total - policy.spent - device.spent
    return {"steps": steps, "total_ms": total * 1000, "policy_ms": policy.spent * 1000,
            "device_ms": device.spent * 1000, "overhead_ms_per_step": overhead / steps * 1000,
            "events": events}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"loop overhead per step over {args.steps} steps (median of {args.repeats}), PhoneWorld-lite in-process")
        print(f"{'configuration':<44} {'overhead ms/step':>17} {'policy ms/step':>15} {'device ms/step':>15}")
        for history, screenshots, label in ((False, False, "no history, UI tree only"),
                                            (True, False, "history (fsync'd steps + events)"),
                                            (True, True, "history + screenshots + JPEG thumbnails")):
            runs = [measure(args.steps, history=history, screenshots=screenshots, durable_dir=Path(tmp))
                    for _ in range(args.repeats)]
            over = statistics.median(r["overhead_ms_per_step"] for r in runs)
            pol = statistics.median(r["policy_ms"] for r in runs) / args.steps
            dev = statistics.median(r["device_ms"] for r in runs) / args.steps
            print(f"{label:<44} {over:>17.2f} {pol:>15.2f} {dev:>15.2f}")
        print("for scale: a PhoneBuddy step on a GPU is ~1-5 s, a real phone's screen capture 35 ms (mirror) to 2 s (PNG)")


if __name__ == "__main__":
    main()
