"""`phonebuddy world ...`: list tasks, solve one with the oracle, replay and check an action file,
render a start screen, and serve the simulated phone over ADB.

    phonebuddy world list [--json] [--category single_app]
    phonebuddy world solve TASK --seed N [--lang zh] [--json]
    phonebuddy world check TASK --seed N --actions FILE [--lang zh] [--json]
    phonebuddy world render TASK --seed N --out DIR [--lang zh]
    phonebuddy world serve ...            (harness.phoneworld.serve; `--app DIR` adds a captured app)
    phonebuddy world capture --serial SERIAL --package PKG --out DIR [--record] [--json]
                             [--max-steps N] [--max-seconds S] [--adb-port P]   (harness.phoneworld.capture)

`check --json` reports `success` (the verifier passed, nothing else changed, and the actions finish), `verified` (the
verifier alone), `side_effects` (what else changed, in plain words, in the --lang language),
`false_complete` and `overdue` (see `run_labels`).

Exit codes: 0 ran (for solve/check: and the verifier passed with no side effects), 1 ran but the verifier failed,
2 bad input (unknown task, malformed action file, action outside the screen, bad arguments).
Top-level imports stay light; the engine loads inside the commands.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from assistant_core import languages as langs

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class CliInputError(ValueError):
    """Bad input from the command line or an input file; the message says what and where."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy world", description="PhoneWorld-lite, the simulated phone.")
    sub = p.add_subparsers(dest="command", required=True)

    ls = sub.add_parser("list", help="list the task templates")
    ls.add_argument("--json", action="store_true", help="one JSON array")
    ls.add_argument("--category", help="only this category (single_app, cross_app, mini_app, safety)")

    def episode(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("task", help="task id, e.g. SettingsTurnOnWifi")
        sp.add_argument("--seed", type=int, default=0)
        sp.add_argument("--lang", default="en", choices=("en", "zh"), help="phone and instruction language")

    solve = sub.add_parser("solve", help="run the oracle on one episode")
    episode(solve)
    solve.add_argument("--json", action="store_true")

    check = sub.add_parser("check", help="replay a JSON-lines action file, then run the verifier")
    episode(check)
    check.add_argument("--actions", required=True, type=Path, help="one Action.to_dict() JSON object a line")
    check.add_argument("--json", action="store_true")

    render = sub.add_parser("render", help="write the start screen as PNG and uiautomator XML")
    episode(render)
    render.add_argument("--out", required=True, type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "serve":
        return _serve(argv[1:])
    if argv and argv[0] == "capture":
        return _capture(argv[1:])
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    from harness.phoneworld.tasks import UnknownTaskError

    try:
        if args.command == "list":
            return _list(args)
        if args.command == "solve":
            return _solve(args)
        if args.command == "check":
            return _check(args)
        return _render(args)
    except (UnknownTaskError, CliInputError) as exc:
        print(f"phonebuddy world {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _serve(argv: list[str]) -> int:
    try:
        serve = importlib.import_module("harness.phoneworld.serve")
    except ModuleNotFoundError as exc:
        if exc.name != "harness.phoneworld.serve":
            raise
        print(
            "phonebuddy world serve: the simulated ADB endpoint (harness.phoneworld.serve) is not installed "
            "in this build yet",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    app_dirs, rest = _take_apps(argv)
    if app_dirs is None:
        print("phonebuddy world serve: --app needs a folder written by `phonebuddy world capture`", file=sys.stderr)
        return EXIT_BAD_INPUT
    if app_dirs:
        from harness.phoneworld.apps.captured import CapturedAppError, read_spec

        try:
            for folder in app_dirs:
                read_spec(folder)  # a bad folder is said before anything listens
        except CapturedAppError as exc:
            print(f"phonebuddy world serve: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return int(serve.main(rest, prepare=lambda world: _install_captured(world, app_dirs)) or 0)
    return int(serve.main(argv) or 0)


def _take_apps(argv: list[str]) -> tuple[list[str] | None, list[str]]:
    """The `--app DIR` options (any number) and the other arguments; None when an --app has no folder."""
    apps: list[str] = []
    rest: list[str] = []
    it = iter(argv)
    for arg in it:
        if arg == "--app":
            folder = next(it, None)
            if folder is None or folder.startswith("-"):
                return None, argv
            apps.append(folder)
        elif arg.startswith("--app="):
            apps.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return apps, rest


def _install_captured(world: Any, app_dirs: list[str]) -> None:
    from harness.phoneworld.apps.captured import load_captured

    for folder in app_dirs:
        load_captured(world, folder)


def _capture_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="phonebuddy world capture",
        description="Explore an app on a connected phone and write it as a mock app (app.json + screenshots). "
        "Never taps anything the safety gate would ask about, never types; personal data is masked.",
    )
    p.add_argument("--serial", help="which phone (default: the only one)")
    p.add_argument("--package", required=True, help="the app to capture, e.g. com.example.bank")
    p.add_argument("--out", required=True, type=Path, help="folder for app.json and screens/")
    p.add_argument("--record", action="store_true",
                   help="do not explore: record the screens a caregiver opens on the mirror until --max-seconds")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--max-steps", type=int, default=300, help="taps, Backs and relaunches at most (default 300)")
    p.add_argument("--max-seconds", type=float, default=600.0, help="time budget in seconds (default 600)")
    p.add_argument("--adb-host", default=None, help="adb server host (default: ANDROID_ADB_SERVER_ADDRESS or 127.0.0.1)")
    p.add_argument("--adb-port", type=int, default=None, help="adb server port (default: ANDROID_ADB_SERVER_PORT or 5037)")
    p.add_argument("--lang", choices=langs.choices(), default="en", help="language of messages")
    return p


_CAPTURE_TEXT = {
    "done": ("Captured {screens} screens and {edges} steps of {package} in {seconds:.1f} s; "
             "{skipped} steps were left alone because they need a confirmation. Written to {out}.",
             "已记录 {package} 的 {screens} 个界面和 {edges} 个操作，用时 {seconds:.1f} 秒；"
             "{skipped} 个需要确认的操作没有点。已保存到 {out}。"),
    "budget": ("The {what} budget ran out before every screen was seen; run again with a larger one to see more.",
               "在看完所有界面之前{what}预算已用完；可以用更大的预算再运行一次。"),
    "bad": ("{what} must be a positive number.", "{what} 必须是正数。"),
    "out": ("Cannot write to the folder {out}.", "无法写入文件夹 {out}。"),
}


def _ctext(key: str, lang: str, **kw: Any) -> str:
    en, zh = _CAPTURE_TEXT[key]
    return (zh if lang == "zh" else en).format(**kw)


def _capture(argv: list[str]) -> int:
    try:
        args = _capture_parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_BAD_INPUT
    for what, value in (("--max-steps", args.max_steps), ("--max-seconds", args.max_seconds)):
        if not value > 0:
            print(_ctext("bad", args.lang, what=what), file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError:
        print(_ctext("out", args.lang, out=args.out), file=sys.stderr)
        return EXIT_BAD_INPUT
    from assistant_core.types import DeviceError
    from harness.adbserver import AdbServerOwner, ServerAddress, server_address
    from harness.opener import Target, open_phone
    from harness.phoneworld.capture import capture_app, record_caregiver

    default = server_address()
    owner = AdbServerOwner(ServerAddress(args.adb_host or default.host, args.adb_port or default.port))
    try:
        device = open_phone(Target(False, serial=args.serial), owner=owner).device  # the one device opener (harness.opener)
        try:
            if args.record:
                result = record_caregiver(device, args.package, args.out, max_seconds=args.max_seconds)
            else:
                result = capture_app(device, args.package, args.out, max_steps=args.max_steps,
                                     max_seconds=args.max_seconds)
        finally:
            device.close()
    except DeviceError as exc:
        print(exc.message.get(args.lang), file=sys.stderr)
        return EXIT_FAILED
    summary = result.summary()
    if args.json:
        print(json.dumps({**summary, "out": str(args.out)}, ensure_ascii=False))
    else:
        print(_ctext("done", args.lang, screens=summary["screens"], edges=summary["edges"], package=args.package,
                     seconds=summary["seconds"], skipped=summary["skipped_sensitive"], out=args.out))
        if summary["stopped"] != "done":
            what = {"steps": ("step", "步数"), "seconds": ("time", "时间")}[summary["stopped"]]
            print(_ctext("budget", args.lang, what=what[1] if args.lang == "zh" else what[0]))
    return EXIT_OK


def _emit(data: Any, as_json: bool, lines: list[str]) -> None:
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=None))
    else:
        print("\n".join(lines))


def _list(args: argparse.Namespace) -> int:
    from harness.phoneworld.tasks import TaskCategory, registry

    tasks = registry.TASKS
    if args.category:
        try:
            category = TaskCategory(args.category)
        except ValueError:
            raise CliInputError(
                f"unknown category {args.category!r}; use one of {', '.join(c.value for c in TaskCategory)}"
            ) from None
        tasks = registry.by_category(category)
    infos = [t.describe() for t in tasks]
    _emit(
        [i.to_dict() for i in infos],
        args.json,
        [f"{i.id:<40} {i.category.value:<11} {i.instruction_en}" for i in infos],
    )
    return EXIT_OK


def _solve(args: argparse.Namespace) -> int:
    from harness.phoneworld.oracle import solve
    from harness.phoneworld.tasks import registry

    registry.get(args.task)  # unknown ids fail before a world is built
    traj = solve(args.task, args.seed, args.lang)
    data = traj.to_dict()
    lines = [f"{traj.task_id} seed {traj.seed} ({traj.language}): {traj.instruction}"]
    lines += [f"  {s.index + 1:>2}. {json.dumps(s.action.to_dict(), ensure_ascii=False)}  # {s.thought}" for s in traj.steps]
    lines.append(f"success: {traj.success}  steps: {len(traj.steps)}" + (f"  error: {traj.error}" if traj.error else ""))
    _emit(data, args.json, lines)
    return EXIT_OK if traj.success else EXIT_FAILED


def read_actions(path: Path) -> list[Any]:
    """Parse a JSON-lines action file; a malformed line raises CliInputError naming its number."""
    from assistant_core.types import Action, ActionError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliInputError(f"cannot read the action file {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CliInputError(f"the action file {str(path)!r} is not UTF-8 text") from None
    actions = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            actions.append(Action.from_dict(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise CliInputError(f"{path}: line {number} is not valid JSON ({exc.msg} at column {exc.colno})") from None
        except (ActionError, TypeError) as exc:
            raise CliInputError(f"{path}: line {number} is not a valid action: {exc}") from None
    return actions


def _check(args: argparse.Namespace) -> int:
    from assistant_core.types import ActionKind, DeviceError
    from harness.phoneworld import SimDevice
    from harness.phoneworld.tasks import make_world, registry
    from harness.phoneworld.tasks.episode import run_labels

    task = registry.get(args.task)
    actions = read_actions(args.actions)
    world, params = make_world(task.id, args.seed, args.lang)
    device = SimDevice(world)
    for number, action in enumerate(actions, start=1):
        for x, y in _points(action):
            if not (0 <= x < world.width and 0 <= y < world.height):
                raise CliInputError(
                    f"action {number} ({action.kind.value} at {x},{y}) lies outside the "
                    f"{world.width}x{world.height} screen"
                )
        try:
            device.act(action)
        except DeviceError as exc:  # an app the phone does not have, a point off the screen...
            raise CliInputError(f"action {number} ({action.kind.value}) failed: {exc.message.en}") from None
    verdict = world.judge(args.lang)
    finished = any(a.kind is ActionKind.FINISH for a in actions)
    labels = run_labels(verdict.verified, finished=finished, budget_ended=not finished)
    success = verdict.success and not labels["overdue"]  # reached but never said done is not a success
    events = [str(getattr(e, "kind", e)) for e in world.sensitive_events]
    lines = [f"{task.id} seed {args.seed}: replayed {len(actions)} actions; success: {success}"]
    lines += [f"  side effect: {e}" for e in verdict.side_effects]
    if labels["false_complete"]:
        lines.append("  false complete: the actions finish as if done, but the task is not done")
    if labels["overdue"]:
        lines.append("  overdue: the goal was reached, but the actions never finish")
    _emit(
        {"task": task.id, "seed": args.seed, "success": success, "verified": verdict.verified,
         "side_effects": list(verdict.side_effects), **labels, "actions": len(actions),
         "sensitive_events": events},
        args.json,
        lines,
    )
    return EXIT_OK if success else EXIT_FAILED


def _points(action: Any) -> list[tuple[int, int]]:
    points = []
    if action.x is not None and action.y is not None:
        points.append((action.x, action.y))
    if action.x2 is not None and action.y2 is not None:
        points.append((action.x2, action.y2))
    return points


def _render(args: argparse.Namespace) -> int:
    from harness.phoneworld.tasks import make_world, registry

    task = registry.get(args.task)
    world, _ = make_world(task.id, args.seed, args.lang)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliInputError(f"cannot create the output folder {str(args.out)!r}: {exc.strerror or exc}") from None
    stem = f"{task.id}-seed{args.seed}-{args.lang}"
    png, xml = args.out / f"{stem}.png", args.out / f"{stem}.xml"
    world.screenshot().save(png)
    xml.write_text(world.ui_xml(), encoding="utf-8")
    print(f"{png}\n{xml}")
    return EXIT_OK
