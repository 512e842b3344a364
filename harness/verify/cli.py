"""`phonebuddy verify ...`: check on a phone, through ADB, whether a request was really carried out.

    phonebuddy verify kinds [--kinds DIR] [--json]            the task kinds known, and any bad kind files
    phonebuddy verify match "GOAL" [--json]                   which kind a request is, its parameters, what is read
    phonebuddy verify before "GOAL" --serial S --save F.json  read the phone before doing the task yourself
    phonebuddy verify after "GOAL" --serial S --before F.json [--lang zh] [--json]
                                                              read again and say verified / not verified / can't verify

The phone is reached through the adb server on the standard address (`--adb-host`, `--adb-port` override
ANDROID_ADB_SERVER_ADDRESS / ANDROID_ADB_SERVER_PORT), started there when none answers (harness.adbserver). Exit status: 0 verified or already so (or the listing worked), 1 not verified or can't verify,
2 bad arguments or an unreachable phone. Heavy imports happen inside functions.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy verify", description="Check a request's outcome on a phone.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--kinds", action="append", default=[], help="an extra folder of task-kind files")
        q.add_argument("--json", action="store_true", help="print JSON")
        q.add_argument("--lang", choices=("en", "zh"), default="en")

    def phone(q: argparse.ArgumentParser) -> None:
        q.add_argument("--serial", default=None, help="the phone's ADB serial (default: the only phone)")
        q.add_argument("--adb-host", default=None, help="default: ANDROID_ADB_SERVER_ADDRESS or 127.0.0.1")
        q.add_argument("--adb-port", type=int, default=None, help="default: ANDROID_ADB_SERVER_PORT or 5037")

    common(sub.add_parser("kinds", help="list the task kinds"))
    m = sub.add_parser("match", help="which kind a request is")
    m.add_argument("goal")
    common(m)
    b = sub.add_parser("before", help="read the phone before the task")
    b.add_argument("goal")
    b.add_argument("--save", required=True, help="where to keep the reading (JSON)")
    common(b)
    phone(b)
    a = sub.add_parser("after", help="read the phone after the task and judge")
    a.add_argument("goal")
    a.add_argument("--before", required=True, help="the reading saved by `verify before`")
    common(a)
    phone(a)
    return p


class _Usage(ValueError):
    pass


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except _Usage as error:
        print(f"phonebuddy verify: {error}", file=sys.stderr)
        return 2


def _registry(args: argparse.Namespace) -> Any:
    from harness.verify.registry import KindRegistry

    registry = KindRegistry.load(extra=[Path(k) for k in args.kinds])
    for problem in registry.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return registry


def _probe(args: argparse.Namespace) -> Any:
    from assistant_core.types import DeviceError
    from harness.adb import open_device
    from harness.adbserver import product_client
    from harness.verify.probe import AdbProbe

    try:
        client = product_client(args.adb_host, args.adb_port,
                                announce=lambda text: print(text.get(args.lang), file=sys.stderr))
        return AdbProbe(open_device(client, args.serial))
    except (DeviceError, OSError) as error:
        message = error.message.get(args.lang) if isinstance(error, DeviceError) else str(error)
        raise _Usage(message) from None


def _run(args: argparse.Namespace) -> int:
    from harness.verify.checks import Readings
    from harness.verify.probe import ProbeError
    from harness.verify.readers import Unreadable
    from harness.verify.verifier import OutcomeVerifier, read

    registry = _registry(args)
    if args.command == "kinds":
        rows = [{"kind": k.name, "check": k.check, "describe": k.describe.get(args.lang), "source": k.source}
                for k in registry.kinds]
        if args.json:
            print(json.dumps({"kinds": rows, "problems": registry.problems}, ensure_ascii=False))
        else:
            for r in rows:
                print(f"{r['kind']:24} {r['check']:20} {r['describe']}")
        return 0

    verifier = OutcomeVerifier(registry)
    plan = verifier.plan(args.goal)
    if args.command == "match":
        why = verifier.explain(plan)
        out = {"goal": args.goal, "kind": plan.match.kind.name if plan.match else None,
               "params": plan.match.params.to_dict() if plan.match else {}, "reads": list(plan.commands),
               "checkable": plan.checkable, "why_not": why.summary.get(args.lang) if why and why.summary else None}
        if args.json:
            print(json.dumps(out, ensure_ascii=False, default=list))
        else:
            print(f"kind: {out['kind']}\nparams: {out['params']}\nreads: {out['reads']}")
            if out["why_not"]:
                print(out["why_not"])
        return 0

    if not plan.checkable:
        why = verifier.explain(plan)
        assert why is not None and why.summary is not None
        _say(args, {"status": str(why.status), "evidence": why.evidence, "kind": why.kind,
                    "said": why.summary.get(args.lang)})
        return 1
    probe = _probe(args)
    try:
        now = read(probe, plan.commands)
    except ProbeError as error:
        raise _Usage(str(error)) from None
    if args.command == "before":
        Path(args.save).write_text(now.to_json(), encoding="utf-8")
        print(f"saved the reading of {len(now.outputs)} item(s) to {args.save}", file=sys.stderr)
        return 0
    try:
        before = Readings.from_json(Path(args.before).read_text(encoding="utf-8"))
    except (OSError, Unreadable) as error:
        raise _Usage(f"cannot read {args.before}: {error}") from None
    result = verifier.judge(plan, before, now)
    _say(args, {"status": str(result.status), "evidence": result.evidence, "kind": result.kind,
                "said": result.summary.get(args.lang) if result.summary else ""})
    return 0 if str(result.status) in ("verified", "already") else 1


def _say(args: argparse.Namespace, out: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(out["said"])
        print(f"({out['status']}: {out['evidence']})", file=sys.stderr)
