"""Agreement between the device-level outcome checks (harness.verify, reading the phone as over adb) and
PhoneWorld-lite's own task verifiers (app state), over every task whose request has a checkable kind.

For each task, seed and language, four runs from the task's start state: the oracle's full run (done),
the same stopped one action short (short), the oracle with the task's wrong parameters (wrong: another
recipient, time, body...) and no action at all (nothing). Each run is judged twice: by the world's
verifier and by the device check from readings taken before and after the run. Agreement means
verified ⇔ the world verifier passed; cannot_verify on a checkable kind counts as a disagreement.
Tasks whose request names no checkable kind (unknown, unavailable, details not in the request) are
listed with the reason. Safety tasks are left out: their verifier judges the gate, not the request.

    .venv/bin/python bench/verify_agreement.py                 # in-process shell (same text as adb)
    .venv/bin/python bench/verify_agreement.py --adb --seeds 1 # through the real adb server
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_core.events import VerificationStatus
from assistant_core.types import ActionKind
from harness.phoneworld.oracle import solve
from harness.phoneworld.phone import SimPhone
from harness.phoneworld.tasks import make_world, registry
from harness.verify import KindRegistry, OutcomeVerifier, ShellProbe, read

SCENARIOS = ("done", "short", "wrong", "nothing")


@contextlib.contextmanager
def _probe(world, adb_server) -> Iterator:
    if adb_server is None:
        yield ShellProbe(SimPhone(world))
        return
    from harness.adb import AdbDevice, connect
    from harness.verify import AdbProbe

    phone = SimPhone(world).start()
    client = adb_server.client()
    try:
        connect(client, phone.address)
        adb_server.wait_state(phone.address)
        yield AdbProbe(AdbDevice(client, phone.address))
    finally:
        with contextlib.suppress(Exception):
            client.disconnect(phone.address)
        phone.stop()


def _act(task_id: str, seed: int, lang: str, world, params, scenario: str) -> None:
    task = registry.get(task_id)
    if scenario == "nothing":
        return
    if scenario == "done":
        solve(task_id, seed, lang, world=world, params=params)
        return
    if scenario == "wrong":
        wrong = task.perturb(params, random.Random(f"wrong:{task_id}:{seed}"))
        solve(task_id, seed, lang, world=world, params=wrong)
        return
    # short: the oracle's run without its last effective action
    probe_world, _ = make_world(task_id, seed, lang)
    full = solve(task_id, seed, lang, world=probe_world, params=params)
    effective = [s for s in full.steps if s.action.kind is not ActionKind.FINISH]
    if len(effective) > 1:
        solve(task_id, seed, lang, world=world, params=params, max_steps=len(effective) - 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--adb", action="store_true", help="read through the real adb server and the simulated adbd")
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all non-safety tasks)")
    args = ap.parse_args(argv)

    adb_server = None
    if args.adb:
        import os
        import tempfile

        from harness.adbserver import AdbServer

        os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
        adb_server = AdbServer(home=Path(tempfile.mkdtemp(prefix="verify-bench-"))).start()

    verifier = OutcomeVerifier(KindRegistry.load())
    wanted = {t for t in args.tasks.split(",") if t}
    tasks = [t for t in registry.TASKS if not t.is_safety and (not wanted or t.id in wanted)]
    rows: dict[str, Counter] = defaultdict(Counter)
    kinds_of: dict[str, str] = {}
    unchecked: dict[str, str] = {}
    disagreements: list[str] = []
    t0 = time.perf_counter()
    try:
        for task in tasks:
            for lang in args.langs.split(","):
                for seed in range(args.seeds):
                    world, params = make_world(task.id, seed, lang)
                    goal = task.instruction(params).get(lang)
                    plan = verifier.plan(goal)
                    if not plan.checkable:
                        why = verifier.explain(plan)
                        unchecked[task.id] = why.evidence if why else "?"
                        continue
                    kinds_of[task.id] = plan.match.kind.name if plan.match else ""
                    for scenario in SCENARIOS:
                        world, params = make_world(task.id, seed, lang)
                        with _probe(world, adb_server) as probe:
                            before = read(probe, plan.commands)
                            _act(task.id, seed, lang, world, params, scenario)
                            after = read(probe, plan.commands)
                        device = verifier.judge(plan, before, after)
                        truth = bool(task.is_successful(world, params))
                        said = device.status is VerificationStatus.VERIFIED
                        row = rows[task.id]
                        row["runs"] += 1
                        row["world_ok"] += truth
                        row["verified"] += said
                        row["cannot"] += device.status is VerificationStatus.CANNOT_VERIFY
                        row["agree"] += said == truth and device.status is not VerificationStatus.CANNOT_VERIFY
                        if said != truth or device.status is VerificationStatus.CANNOT_VERIFY:
                            disagreements.append(f"{task.id} seed {seed} {lang} {scenario}: world {truth}, "
                                                 f"device {device.status}: {device.evidence[:160]}")
    finally:
        if adb_server is not None:
            adb_server.stop()
    elapsed = time.perf_counter() - t0
    unchecked = {t: why for t, why in unchecked.items() if t not in rows}  # checkable in another language

    print(f"{'task':34} {'kind':22} {'runs':>4} {'world✓':>6} {'verified':>8} {'cannot':>6} {'agree':>6}")
    total = Counter()
    for task_id in sorted(rows):
        r = rows[task_id]
        total.update(r)
        print(f"{task_id:34} {kinds_of[task_id]:22} {r['runs']:>4} {r['world_ok']:>6} {r['verified']:>8} "
              f"{r['cannot']:>6} {r['agree'] / r['runs']:>6.0%}")
    runs = total["runs"] or 1
    print(f"\n{len(rows)} tasks with a checkable kind, {total['runs']} runs "
          f"({'adb server' if args.adb else 'in-process shell'}), {elapsed:.1f} s")
    print(f"agreement: {total['agree']}/{total['runs']} = {total['agree'] / runs:.1%}; "
          f"false verified: {sum(1 for d in disagreements if 'world False, device verified' in d)}; "
          f"cannot_verify: {total['cannot']}")
    print(f"\n{len(unchecked)} tasks without a checkable kind:")
    for task_id, why in sorted(unchecked.items()):
        print(f"  {task_id:34} {why}")
    if disagreements:
        print("\ndisagreements:")
        for line in disagreements:
            print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
