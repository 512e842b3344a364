"""Fast path versus the GUI path: the time from request text to a verified result on the same requests
(PhoneWorld-lite's single-app tasks, their own instructions), and the share of those tasks the fast path
completes by itself.

    .venv/bin/python bench/bench_fastpath.py [--seeds 2] [--langs en zh] [--adb] [--json out.json]

Each run goes through the real loop, gate (every confirmation answered yes), and outcome check. The fast
path runs with a fallback that does nothing, so a task counts for it only if its tools did the task. The
GUI path is the oracle (no model time at all: a real model adds its own seconds per step, so the GUI
figures are a lower bound; the steps per task are printed to scale them). In-process by default
(SimDevice, screenshots rendered as the app does); `--adb` drives both through the real adb server.
Prints figures and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from assistant_core.confirm import FixedConfirmer
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.policies import NoopPolicy
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer
from harness.fastpath import FastPathPolicy, FastPlanner
from harness.phoneworld import SimDevice
from harness.phoneworld.oracle import OraclePolicy
from harness.phoneworld.tasks import TaskCategory, make_world, registry
from harness.verify import KindRegistry, OutcomeVerifier
from tests.core_fixtures import drain

KINDS = KindRegistry.load()


@contextlib.contextmanager
def _device(world: Any, adb: Any) -> Any:
    if adb is None:
        yield SimDevice(world)
        return
    from harness.adb import AdbDevice, connect
    from harness.phoneworld.phone import SimPhone

    phone = SimPhone(world).start()
    client = adb.client()
    try:
        connect(client, phone.address)
        adb.wait_state(phone.address)
        device = AdbDevice(client, phone.address, reconnect_grace_s=3.0)
        try:
            yield device
        finally:
            device.close()
    finally:
        with contextlib.suppress(Exception):
            client.disconnect(phone.address)
        phone.stop()


def run_one(task: Any, seed: int, lang: str, path: str, adb: Any) -> dict[str, Any]:
    world, params = make_world(task.id, seed, lang)
    goal = task.instruction(params).get(lang)
    with _device(world, adb) as device:
        if path == "fast":
            policy: Any = FastPathPolicy(FastPlanner(KINDS), fallback=NoopPolicy(waits=0), device=device, lang=lang)
        else:
            policy = OraclePolicy(task.id, seed, world, language=lang, params=params)
        context = GateContext(allowed_apps=frozenset(task.apps), app_labels=device.installed_apps(), lang=lang)
        t0 = time.perf_counter()
        result = drain(run_episode(goal, device=device, policy=policy, confirmer=FixedConfirmer(ConfirmAnswer.YES),
                                    context=context, config=LoopConfig(step_budget=task.max_steps, lang=lang,
                                                                       thumbnails=False),
                                    sleep=lambda s: None, outcome_check=OutcomeVerifier(KINDS)))
        elapsed = time.perf_counter() - t0
    acted = path != "fast" or (policy.handed_at is None and any(s.executed for s in result.steps))
    verified = result.verification is not None and str(result.verification.status) == "verified"
    return {"task": task.id, "seed": seed, "lang": lang, "path": path, "seconds": elapsed,
            "steps": len(result.steps), "done": bool(task.is_successful(world, params)) and acted,
            "verified": verified, "handover": getattr(policy, "handover_reason", "")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--langs", nargs="+", default=["en", "zh"])
    ap.add_argument("--adb", action="store_true", help="through the real adb server (slower, closer to a phone)")
    ap.add_argument("--json", help="also write every run here")
    args = ap.parse_args()

    server_cm: Any = contextlib.nullcontext(None)
    if args.adb:
        import os
        import tempfile

        from harness.adbserver import AdbServer

        os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
        server_cm = AdbServer(home=tempfile.mkdtemp(prefix="bench-adb-"))  # a private port, never 5037
    tasks = registry.by_category(TaskCategory.SINGLE_APP)
    rows: list[dict[str, Any]] = []
    with server_cm as adb:
        for task in tasks:
            for lang in args.langs:
                for seed in range(args.seeds):
                    for path in ("fast", "gui"):
                        rows.append(run_one(task, seed, lang, path, adb))

    fast = {(r["task"], r["seed"], r["lang"]): r for r in rows if r["path"] == "fast"}
    gui = {(r["task"], r["seed"], r["lang"]): r for r in rows if r["path"] == "gui"}
    both = [k for k in fast if fast[k]["done"] and fast[k]["verified"] and gui[k]["done"] and gui[k]["verified"]]
    n = len(fast)
    done = sum(r["done"] for r in fast.values())
    print(f"single-app tasks: {len(tasks)} x {len(args.langs)} languages x {args.seeds} seeds = {n} requests "
          f"({'adb' if args.adb else 'in-process'})")
    print(f"fast path completes by itself: {done}/{n} = {done / n:.0%} "
          f"(verified {sum(r['verified'] and r['done'] for r in fast.values())})")
    print(f"GUI path (oracle) completes: {sum(r['done'] for r in gui.values())}/{n}")
    if both:
        f_med = statistics.median(fast[k]["seconds"] for k in both)
        g_med = statistics.median(gui[k]["seconds"] for k in both)
        f_steps = statistics.median(fast[k]["steps"] for k in both)
        g_steps = statistics.median(gui[k]["steps"] for k in both)
        print(f"on the {len(both)} requests both complete and verify: median request->verified result "
              f"fast {f_med * 1000:.0f} ms ({f_steps:g} steps) vs GUI {g_med * 1000:.0f} ms ({g_steps:g} steps); "
              f"GUI/fast = {g_med / f_med:.1f}x")
        print(f"  with a model step of S seconds the GUI path adds about {g_steps:g} x S (e.g. {g_steps * 60:.0f} s "
              f"at 60 s/step for a 4B model on a CPU); the fast path runs no model")
    handed: dict[str, list[str]] = {}
    for r in fast.values():
        if not r["done"]:
            handed.setdefault(r["handover"] or "not done", []).append(f"{r['task']}/{r['lang']}")
    for reason, which in sorted(handed.items(), key=lambda kv: -len(kv[1])):
        print(f"  not by the fast path ({len(which)}): {reason}: {', '.join(sorted(set(which))[:6])}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
