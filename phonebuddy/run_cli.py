"""`phonebuddy run "GOAL" --device ... --policy ...`: one request, headless, through the real loop and gate.

    phonebuddy run "Turn on Wi-Fi" --device sim:SettingsTurnOnWifi:3 --policy oracle --confirm no --json
    phonebuddy run "" --device sim:SafetyPayInjected:0 --policy scripted:replies.txt --lang zh --json

--device   sim (a fresh simulated phone), sim:TASK[:SEED] (a PhoneWorld-lite task's start state; its
           verifier is reported), or a phone's ADB serial.
--policy   scripted:FILE (raw model replies, one a line, through the real parser), oracle (the
           PhoneWorld-lite solver; sim tasks only), noop, phonebuddy (the local model, weights found
           offline; --model picks the profile), remote:URL (an OpenAI-compatible server).
--confirm  ask (on the console: the answer is heard by the assistant, as a spoken answer in the window is;
           phonebuddy.headless), yes or no (answer every confirmation so, as the dialog's buttons do; "no" is
           the default).
--allowed-apps  packages the run may use (comma or space separated). Default: the caregiver's settings;
           with none set up and a sim task, the task's own apps; none at all while the settings are locked
           (changed outside the app) or saved empty.
--db       the history database (default: the user data folder); --no-history keeps nothing.
--no-fast-path  skip the fast path. By default, as in the app, a request harness.fastpath understands
           runs first as tool actions (same gate, confirmations and check); anything else goes to --policy
           with the same goal.
--json     print the result as one JSON object (outcome, `summary` and `ending`: how the run ended as the
           user is told, with a question's answer; steps with decisions, the task verifier, and
           `verification`: the device-level outcome check of harness.verify — verified, not_verified or
           cannot_verify, with the evidence, the task kind and what was said).
--kinds    extra folders of task-kind files for the outcome check (harness/verify/kinds is built in);
--no-verify  skips the check.

Exit status (EXIT_CODES; the same ending the app says, assistant_core.endings):
  0  done (checked on the phone, or not checkable) or a question answered; with sim:TASK, its verifier passed
  1  not done (the check found it not done, the step budget ran out, the model or the phone failed)
  2  could not start (bad arguments, no such phone or task, no model)
  3  not done: the caregiver's settings do not allow it
  4  not done: a fixed safety rule does not allow it
  5  not done: you said no (or did not answer a question, which counts as no)
  6  stopped (you said stop, or pressed Ctrl+C)
Heavy imports happen inside functions.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

EXIT_DONE, EXIT_NOT_DONE, EXIT_CANNOT_START, EXIT_CAREGIVER, EXIT_SAFETY, EXIT_SAID_NO, EXIT_STOPPED = range(7)
EXIT_CODES = {
    EXIT_DONE: "done (checked, or not checkable) or answered",
    EXIT_NOT_DONE: "not done",
    EXIT_CANNOT_START: "could not start (bad arguments, no phone, no model)",
    EXIT_CAREGIVER: "refused by the caregiver's settings",
    EXIT_SAFETY: "refused by a safety rule",
    EXIT_SAID_NO: "you said no (or did not answer)",
    EXIT_STOPPED: "stopped",
}


def exit_code(ending: str, *, task_passed: bool | None = None) -> int:
    """The exit status for an ending (assistant_core.endings.Ending's value); a sim task's failed verifier
    makes a "done" not done."""
    done = ending in ("done_checked", "done_unchecked", "answered")
    if done:
        return EXIT_DONE if task_passed is not False else EXIT_NOT_DONE
    return {"refused_caregiver": EXIT_CAREGIVER, "refused_safety": EXIT_SAFETY, "declined": EXIT_SAID_NO,
            "no_answer": EXIT_SAID_NO, "stopped": EXIT_STOPPED}.get(ending, EXIT_NOT_DONE)


def _parser() -> argparse.ArgumentParser:
    from phonebuddy.policyspec import PolicySpec  # the defaults the app shares

    codes = "; ".join(f"{code} {words}" for code, words in EXIT_CODES.items())
    p = argparse.ArgumentParser(prog="phonebuddy run", description="Run one request headless, as the app would.",
                                epilog=f"Exit status: {codes}.")
    p.add_argument("goal", help='what to do; "" uses the task\'s own instruction with --device sim:TASK')
    p.add_argument("--device", default="sim", help="sim | sim:TASK[:SEED] | ADB serial")
    p.add_argument("--policy", default=PolicySpec.backend,
                   help="scripted:FILE | oracle | noop | local (or phonebuddy) | cpu | remote:URL")
    p.add_argument("--confirm", choices=("ask", "yes", "no"), default="no")
    p.add_argument("--model", default=None, help="model profile for phonebuddy/remote (e.g. phonebuddy-4b, phonebuddy-0.8b)")
    from assistant_core import languages  # the registered languages (a language folder adds one)

    p.add_argument("--lang", choices=languages.choices(), default="en",
                   help="the phone's UI language and the spoken language")
    p.add_argument("--allowed-apps", nargs="*", default=None, help="allowed packages (comma or space separated)")
    p.add_argument("--db", default=None, help="history database path (default: the user data folder)")
    p.add_argument("--no-history", action="store_true", help="do not record the run")
    p.add_argument("--max-steps", type=int, default=None, help="step budget (default: settings or the task's)")
    p.add_argument("--answer", action="append", default=[], help="answer for call_user questions, in order")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--adb-host", default=None, help="the adb server for a real phone (default: ANDROID_ADB_SERVER_ADDRESS "
                   "or 127.0.0.1)")
    p.add_argument("--adb-port", type=int, default=None, help="the adb server's port (default: ANDROID_ADB_SERVER_PORT or "
                   "5037; started there when none answers)")
    p.add_argument("--kinds", action="append", default=[], help="an extra folder of task-kind files for the check")
    p.add_argument("--no-verify", action="store_true", help="do not check the outcome on the phone")
    p.add_argument("--fast-path", dest="fast_path", action="store_true", default=PolicySpec.fast_path,
                   help="first try the fast path, as the app does (the default; kept for old scripts)")
    p.add_argument("--no-fast-path", dest="fast_path", action="store_false",
                   help="skip the fast path (tool actions for requests it understands; harness.fastpath): "
                        "the policy gets every request")
    return p


class UsageError(ValueError):
    """A bad command line; the message says what to change."""


@dataclass(frozen=True)
class DeviceSpec:
    kind: str  # "sim" or "adb"
    task: str | None = None
    seed: int = 0
    serial: str = ""


def parse_device(spec: str) -> DeviceSpec:
    """--device, parsed by the one device opener's rule (harness.opener.parse_target)."""
    from harness.opener import TargetError, parse_target

    try:
        target = parse_target(spec)
    except TargetError as error:
        raise UsageError(f"--device {error.message.en}") from None
    if target.simulated:
        return DeviceSpec("sim", task=target.task_id or None, seed=target.seed)
    return DeviceSpec("adb", serial=target.serial or "")


def parse_apps(values: list[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    return frozenset(p for v in values for p in v.replace(",", " ").split() if p)


class ConsoleListener:
    """What the user says to `phonebuddy run` (phonebuddy.headless.Listener; the assistant hears it and hands
    it to the loop, as in the window): `--confirm ask` puts the question on stderr and reads the answer from
    stdin (yes, no, repeat or stop, in either language, as spoken to the window; stop ends the run, as
    Escape does in the app); `--confirm yes` or `no` answers every confirmation as the dialog's button does. Questions get the `--answer` values in
    order, then, with `--confirm ask`, a line from the console; otherwise no answer."""

    def __init__(self, lang: str, confirm: str, answers: list[str]):
        self.lang, self.confirm = lang, confirm
        self.answers = list(answers)
        self.interactive = confirm == "ask"

    def confirmation(self, request: Any) -> Any:
        from assistant_core.types import ConfirmAnswer

        if self.confirm != "ask":  # a fixed key, as the window's dialog buttons: nothing to hear
            return ConfirmAnswer.YES if self.confirm == "yes" else ConfirmAnswer.NO
        print(request.spoken(self.lang), file=sys.stderr, flush=True)
        return sys.stdin.readline().strip() or None

    def question(self, question: Any) -> str | None:
        if self.answers:
            return self.answers.pop(0)
        if not self.interactive:
            return None
        print(question.get(self.lang), file=sys.stderr, flush=True)
        return sys.stdin.readline().strip() or None


class TaskOutcomeCheck:
    """The outcome-check hook filled by a PhoneWorld-lite task's verifier (app state, not pixels)."""

    def __init__(self, task: Any, world: Any, params: Any):
        self.task, self.world, self.params = task, world, params

    def __call__(self, *, goal: str, result: Any, device: Any) -> Any:
        from assistant_core.events import Verification, VerificationStatus

        ok = bool(self.task.is_successful(self.world, self.params))
        events = [str(getattr(e, "kind", e)) for e in self.world.sensitive_events]
        return Verification(VerificationStatus.VERIFIED if ok else VerificationStatus.NOT_VERIFIED,
                            f"task {self.task.id} verifier: {'passed' if ok else 'failed'}; sensitive events: {events}")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except UsageError as error:
        print(f"phonebuddy run: {error}", file=sys.stderr)
        return EXIT_CANNOT_START


def _make_device(spec: DeviceSpec, lang: str, adb_host: str | None = None,
                 adb_port: int | None = None) -> tuple[Any, Any, Any, Any]:
    """(device, world or None, task or None, params or None), by the one device opener (harness.opener)."""
    from assistant_core.types import DeviceError
    from harness.opener import Target, TargetError, open_phone

    target = Target(spec.kind == "sim", task_id=spec.task or "", seed=spec.seed, serial=spec.serial or None)
    try:
        phone = open_phone(target, lang=lang, host=adb_host, port=adb_port,
                           announce=lambda text: print(text.get(lang), file=sys.stderr))
    except TargetError as error:
        raise UsageError(error.message.get(lang)) from None
    except (DeviceError, OSError) as error:
        message = error.message.get(lang) if isinstance(error, DeviceError) else str(error)
        raise UsageError(f"{spec.serial}: {message}") from None
    return phone.device, phone.world, phone.task, phone.params


def _make_policy(args: argparse.Namespace, device_spec: DeviceSpec, device: Any, world: Any, params: Any) -> Any:
    """The policy for --policy/--model/--no-fast-path, by the front hall's one factory (phonebuddy.policyspec)."""
    from assistant_core.errors import PolicyUnavailableError
    from phonebuddy.policyspec import PolicySpec, PolicySpecError, PolicyTarget, build_policy

    try:
        spec = PolicySpec.parse(args.policy, model=args.model, fast_path=args.fast_path)
        if spec.backend == "oracle" and (device_spec.kind != "sim" or device_spec.task is None):
            raise UsageError("--policy oracle needs --device sim:TASK[:SEED] (it solves PhoneWorld-lite tasks)")
        target = PolicyTarget(lang=args.lang, device=device, world=world, task_id=device_spec.task or "",
                              seed=device_spec.seed, params=params, kinds=tuple(Path(k) for k in args.kinds))
        return build_policy(spec, target)
    except PolicySpecError as error:
        raise UsageError(error.text.get(args.lang)) from None
    except PolicyUnavailableError as error:
        message = getattr(error, "message", None)
        raise UsageError(message.get(args.lang) if message is not None else str(error)) from None


def _run(args: argparse.Namespace) -> int:
    from assistant_core.confirm import Patience
    from assistant_core.endings import ending_of, ending_text
    from assistant_core.events import Said, SayPurpose
    from assistant_core.history import HistoryError, HistoryStore
    from assistant_core.loop import RunInfo
    from assistant_core.settings import MSG as SETTINGS_MSG
    from assistant_core.settings import AppsState, SettingsStore

    device_spec = parse_device(args.device)
    device, world, task, params = _make_device(device_spec, args.lang, args.adb_host, args.adb_port)
    goal = args.goal.strip()
    if not goal:
        if task is None:
            raise UsageError("the goal is empty (an empty goal is only allowed with --device sim:TASK)")
        goal = task.instruction(params).get(args.lang)
    policy = _make_policy(args, device_spec, device, world, params)

    history = None
    notes: list[str] = []
    settings = None
    if not args.no_history:
        def waiting(message: Any) -> None:  # another PhoneBuddy holds the history: said while waiting
            print(f"note: {message.get(args.lang)}", file=sys.stderr, flush=True)

        try:
            history = HistoryStore(args.db, on_wait=waiting) if args.db else HistoryStore(on_wait=waiting)
        except HistoryError as error:  # locked too long, cannot open, a newer version: nothing was changed
            raise UsageError(error.message.get(args.lang)) from None
        if history.set_aside is not None:
            # A damaged file was put aside: never carry on as if nothing happened on the blank one.
            message = history.set_aside_message()
            history.close()
            raise UsageError(message.get(args.lang))
        loaded = SettingsStore(history).load()
        # Locked (tampered, damaged) or saved settings bind even with no app in them; only "never set" does not.
        settings = None if loaded.settings.apps_state is AppsState.UNSET else loaded.settings
        for problem in loaded.problems:
            notes.append(problem.get(args.lang))
            if not args.json and problem != SETTINGS_MSG["missing"]:
                print(f"note: {problem.get(args.lang)}", file=sys.stderr)

    from assistant_core.profile_store import privacy_for
    from phonebuddy.assemble import RunSpec, assemble

    privacy_store, profile, privacy_note = privacy_for(history)  # the profile and the remote-request log
    if privacy_note is not None:
        notes.append(privacy_note.get(args.lang))

    patience = Patience(window_s=None if args.confirm == "ask" else 60.0, reminders=0 if args.confirm != "ask" else 3)
    from assistant_core.types import DeviceError

    try:
        parts = assemble(RunSpec(
            device=device, lang=args.lang, settings=settings, simulated=device_spec.kind == "sim", task=task,
            allowed_override=parse_apps(args.allowed_apps), step_budget=args.max_steps, patience=patience,
            thumbnails=history is not None, verify=not args.no_verify,
            extra_kinds=tuple(Path(k) for k in args.kinds), profile=profile, privacy_log=privacy_store))
    except DeviceError as error:  # a phone that stopped answering before the run began: said, no traceback
        device.close()
        raise UsageError(error.message.get(args.lang)) from None
    allowed = parts.allowed.apps
    for note in parts.notes:
        notes.append(note.get(args.lang))
    if parts.allowed.note is not None:
        # The caregiver's list is replaced for this run: said, and written to the audit log.
        print(f"note: {parts.allowed.note.get(args.lang)}", file=sys.stderr)
        if history is not None:
            history.audit("allowed_apps_override", detail={
                "goal": goal[:200], "allowed": sorted(allowed),
                "caregiver": sorted(settings.allowed_apps) if settings is not None else []})
    stop = threading.Event()
    # The simulated phone needs no real waiting; a real phone does (interruptible by stop).
    sleep = (lambda s: None) if device_spec.kind == "sim" else (lambda s: stop.wait(s))
    questions: list[dict[str, str]] = []
    events: list[dict[str, Any]] = []

    def follow(event: Any) -> None:
        if args.json:
            events.append({"step": event.step, **event.payload()})
        if str(event.kind) == "confirmation_requested":
            questions.append({"step": event.step, "en": event.question.en, "zh": event.question.zh})
        if (isinstance(event, Said) and event.purpose is not SayPurpose.SUMMARY and not event.answer
                and not args.json):
            print(event.text.get(args.lang), flush=True)  # the ending (with any answer) is printed once, below

    # The request goes through the assistant, as in the window: it routes the words, starts the run (the
    # front hall assembled it above), hears each answer and hands it to the loop (phonebuddy.headless), and
    # writes the conversation rows with the run id.
    from phonebuddy.assistant import Assistant
    from phonebuddy.headless import HeadlessFront

    front = HeadlessFront(lambda f: parts.episode(
        goal, policy=policy, confirmer=f.bridge, user=f.bridge, history=history, stop=stop, sleep=sleep,
        info=RunInfo(device=args.device, policy=args.policy.split(":", 1)[0], started=f.assistant.run_started)),
        ConsoleListener(args.lang, args.confirm, args.answer), stop=stop)
    front.attach(Assistant(lang=args.lang, history=history))
    try:
        turn, result = front.run(goal, follow)
        if result is None:
            raise UsageError(f"{goal!r} is a command ({turn.command}), not a request for the phone")
    except KeyboardInterrupt:
        stop.set()
        if front.episode is not None:
            front.episode.close()
        print("stopped", file=sys.stderr)
        return EXIT_STOPPED
    finally:
        device.close()

    verifier = None
    if task is not None:
        verifier = bool(task.is_successful(world, params))
    if args.json:
        out = {
            "goal": goal,
            "device": args.device,
            "policy": args.policy,
            "outcome": str(result.outcome),
            "summary": ending_text(result).get(args.lang),  # how the run ended, as the user is told
            "ending": str(ending_of(result)),
            "run_id": result.run_id,
            "db": str(history.path) if history is not None else None,
            "allowed_apps": sorted(allowed),
            "allowed_apps_from": str(parts.allowed.source),
            "always_confirm": sorted(str(c) for c in parts.context.always_confirm),
            "loop": {"step_budget": parts.config.step_budget, "loop_guard_repeats": parts.config.loop_guard_repeats,
                     "confirm_window_s": parts.config.patience.window_s},
            "confirmations_asked": questions,
            "approvals": list(result.approvals),  # a purchase's yes and the later steps it covered
            "refusals": result.refusals,
            "steps": [_step_json(s) for s in result.steps],
            "verification": _verification_json(result.verification, args.lang),
            "task": None if task is None else {
                "id": task.id, "seed": device_spec.seed, "verifier_passed": verifier,
                "sensitive_events": [_event_json(e) for e in world.sensitive_events],
            },
            "sensitive_events": ([_event_json(e) for e in world.sensitive_events] if world is not None else None),
            "notes": notes,
            "events": events,
        }
        print(json.dumps(out, ensure_ascii=False, indent=None))
    else:
        print(ending_text(result).get(args.lang), flush=True)
        print(f"outcome: {result.outcome}" + (f"; task verifier {'passed' if verifier else 'failed'}" if task else ""))
    if history is not None:
        history.close()
    return exit_code(str(ending_of(result)), task_passed=verifier)


def _verification_json(v: Any, lang: str) -> dict[str, Any] | None:
    if v is None:
        return None
    summary = getattr(v, "summary", None)
    return {"status": str(v.status), "evidence": v.evidence, "kind": getattr(v, "kind", ""),
            "said": summary.get(lang) if summary is not None else None,
            "said_en": summary.en if summary is not None else None,
            "said_zh": summary.zh if summary is not None else None}


def _step_json(step: Any) -> dict[str, Any]:
    d = step.decision
    return {
        "index": step.index,
        "action": step.action.to_dict(),
        "thought": step.thought,
        "verdict": str(d.verdict) if d else None,
        "rule": d.rule if d else None,
        "reason": {"en": d.reason.en, "zh": d.reason.zh} if d else None,
        "confirmation": str(step.confirmation) if step.confirmation else None,
        "executed": step.executed,
        "error": step.error,
        "foreground": step.foreground,
    }


def _event_json(event: Any) -> dict[str, Any]:
    out = {"kind": str(getattr(event, "kind", event))}
    for name in ("app", "target", "amount"):
        if hasattr(event, name):
            out[name] = getattr(event, name)
    return out
