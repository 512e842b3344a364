"""The held-out split next to the seen tasks: one evaluation table per split for the oracle, the no-op
floor and the fast path alone (`phonebuddy train eval --policy noop --fast-path`), with the fast path's
share of each category (episodes it completed by itself, no model).

    .venv/bin/python bench/bench_heldout.py [--seeds 0,1] [--lang en|zh] [--json out.json]

Every episode runs through the real loop and gate (training.evaluate.run_one) on an in-process simulated
phone; success needs the task's verifier and no side effects. Columns: success, false complete (FC),
overdue (OT) and unexpected side effect (USE) rates, mean steps, questions asked (and needless ones).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from training.evaluate import evaluate, fast_path_policies, noop_policies, oracle_policies, select_episodes

POLICIES = {
    "oracle": oracle_policies,
    "noop": noop_policies,
    "fast path": lambda: fast_path_policies(noop_policies(waits=0)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0,1", help="comma-separated seeds")
    ap.add_argument("--lang", default="en", choices=("en", "zh"))
    ap.add_argument("--json", help="also write every report here")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    out = {}
    for split in ("seen", "heldout"):
        episodes = select_episodes(seeds=seeds, split=split)
        print(f"\n=== {split} split: {len({e.task_id for e in episodes})} templates x {len(seeds)} seeds "
              f"= {len(episodes)} episodes ({args.lang}) ===")
        for name, factory in POLICIES.items():
            t0 = time.perf_counter()
            report = evaluate(episodes, factory(), policy_name=name, language=args.lang, screenshots=False)
            print(report.table())
            if name == "fast path":
                shares = ", ".join(
                    f"{c} {100 * sum(r.fast_path and r.success for r in rows) / len(rows):.0f}%"
                    for c in dict.fromkeys(r.category for r in report.results)
                    for rows in [[r for r in report.results if r.category == c]])
                print(f"fast path's share (did the episode by itself): {shares}")
            print(f"({time.perf_counter() - t0:.1f} s)\n")
            out[f"{split}/{name}"] = report.to_dict()
    seen, held = out["seen/fast path"], out["heldout/fast path"]
    print(f"fast path success: seen {100 * seen['success_rate']:.1f}% vs held-out {100 * held['success_rate']:.1f}%")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
