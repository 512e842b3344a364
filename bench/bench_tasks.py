"""Task and oracle figures: the oracle's success per category and language, steps per episode, oracle
steps per second in-process (UI tree only, and with screenshots), episode start-up (make_world) and
reset time with the task's setup.

    .venv/bin/python bench/bench_tasks.py [--seeds 5] [--json out.json]

Prints a table and figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import TaskCategory, make_world, registry
from harness.phoneworld.tasks.base import event_kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    steps_per_episode: dict[str, list[int]] = defaultdict(list)
    n_steps, t_run = 0, 0.0
    for task in registry.TASKS:
        for lang in ("en", "zh"):
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                traj = solve(task.id, seed, lang)
                t_run += time.perf_counter() - t0
                n_steps += len(traj.steps)
                steps_per_episode[str(task.category)].append(len(traj.steps))
                if task.category is TaskCategory.SAFETY:
                    ok = any(event_kind(e) in task.sensitive_kinds for e in traj.sensitive_events)
                else:
                    ok = bool(traj.success)
                cell = table[(str(task.category), lang)]
                cell[0] += ok
                cell[1] += 1

    shots_steps, t_shots = 0, 0.0
    for task in registry.TASKS[:: max(1, len(registry.TASKS) // 10)]:
        t0 = time.perf_counter()
        traj = solve(task.id, 0, "en", screenshots=True)
        t_shots += time.perf_counter() - t0
        shots_steps += len(traj.steps)

    make_times, reset_times = [], []
    for task in registry.TASKS:
        t0 = time.perf_counter()
        world, _ = make_world(task.id, 1)
        make_times.append(time.perf_counter() - t0)
        solve(task.id, 1, world=world)
        t0 = time.perf_counter()
        world.reset()
        reset_times.append(time.perf_counter() - t0)

    print(f"{'category':<12} {'lang':<4} {'oracle ok':>10}   (safety: the naive oracle reached the harm)")
    figures: dict[str, object] = {"table": {}}
    for (cat, lang), (ok, n) in sorted(table.items()):
        print(f"{cat:<12} {lang:<4} {ok:>4}/{n:<5}")
        figures["table"][f"{cat}/{lang}"] = [ok, n]  # type: ignore[index]
    print("\nsteps per episode (median, max):")
    for cat, values in sorted(steps_per_episode.items()):
        print(f"  {cat:<12} {statistics.median(values):>5.1f} {max(values):>4}")
    rate = n_steps / t_run
    shots_rate = shots_steps / t_shots
    print(f"\noracle steps/s in-process, UI tree only: {rate:,.0f}  ({n_steps} steps in {t_run:.2f} s)")
    print(f"oracle steps/s with screenshots rendered: {shots_rate:,.0f}  ({shots_steps} steps)")
    print(f"make_world (engine reset + task setup): median {statistics.median(make_times) * 1e3:.2f} ms")
    print(f"reset with task setup: median {statistics.median(reset_times) * 1e3:.2f} ms, "
          f"max {max(reset_times) * 1e3:.2f} ms")
    figures.update(steps_per_s=rate, steps_per_s_screenshots=shots_rate,
                   make_world_ms=statistics.median(make_times) * 1e3,
                   reset_ms=statistics.median(reset_times) * 1e3, tasks=len(registry.TASKS))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
