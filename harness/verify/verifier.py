"""The outcome verifier: recognises the request's kind, reads the phone before and after the run, and
says verified / not verified / cannot verify, with the evidence and a spoken sentence in both languages.

    verifier = OutcomeVerifier(KindRegistry.load())
    verifier.before_run(goal=goal, device=device)          # the agent loop calls this before step one
    verification = verifier(goal=goal, result=result, device=device)   # ... and this after the end
    verification.status, verification.evidence, verification.summary.get("zh")

    # without the loop (benchmarks, the CLI): explicit readings
    plan = verifier.plan(goal); before = read(probe, plan.commands); ...; verifier.judge(plan, before, after)

Contract: never raises for anything the phone says or fails to say — an unreadable or failed reading is
cannot_verify with the reason; an unknown kind is cannot_verify "I can't check this kind of task"; a
request whose kind is known but whose details are missing says which detail. Only a change seen
between the two readings is verified.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from assistant_core.events import Verification, VerificationStatus
from assistant_core.i18n import Catalog, Text
from harness.verify.checks import CHECKS, PARAM_NAMES, Finding, Readings
from harness.verify.probe import Probe, ProbeError, probe_for
from harness.verify.registry import UNAVAILABLE, KindMatch, KindRegistry

log = logging.getLogger(__name__)

SAY = Catalog(
    "verify",
    {
        "verified": "I checked on the phone: {detail}.",
        "not_verified": "I could not confirm it on the phone: {detail}.",
        "already": "I checked on the phone: {detail}.",
        "cannot_verify": "I can't check whether it was done: {detail}.",
        "no_kind": "I can't check this kind of task, so I can't confirm it was done.",
        "unavailable": "I can't check this kind of task ({what}): {reason}.",
        "missing": "I can't check it exactly: the request doesn't say {param}.",
        "no_probe": "I can't read this phone's state",
        "no_before": "I could not read the phone before the run started ({reason})",
        "read_failed": "I could not read the phone ({reason})",
        "also": " I also noticed something you did not ask for: {what}.",
    },
)

# Changes the user did not ask for that a plain reading can see: a radio switched, a text sent, a call
# made. Read before and after every checked run; one that changed and is not what the request is about
# is said after the verdict (harness.phoneworld.sideeffects does the same, exhaustively, in the simulator).
WATCH = {
    "settings get global airplane_mode_on": Text("airplane mode was switched"),
    "settings get global wifi_on": Text("Wi-Fi was switched"),
    "settings get global bluetooth_on": Text("Bluetooth was switched"),
    "content query --uri content://sms/sent --projection _id": Text("a text message was sent"),
    "content query --uri content://call_log/calls --projection _id": Text("a call was made"),
}


def _subject(command: str) -> str:
    """What a watched reading is about: the setting's key or the provider's uri."""
    words = command.split()
    return words[words.index("--uri") + 1] if "--uri" in words else words[-1]


def _watch(probe: Probe) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for cmd in WATCH:
        try:
            out[cmd] = probe.shell(cmd)
        except ProbeError:
            out[cmd] = None
    return out


@dataclass(frozen=True)
class Plan:
    """What checking one request takes: its kind match (None: unknown kind) and the commands to read."""

    goal: str
    match: KindMatch | None
    commands: tuple[str, ...] = ()

    @property
    def checkable(self) -> bool:
        return bool(self.commands)


def read(probe: Probe, commands: tuple[str, ...]) -> Readings:
    """Run each command once (`pull:PATH` pulls a small file; a missing file reads as None).
    ProbeError when the phone cannot be read at all."""
    outputs: list[tuple[str, str | None]] = []
    for cmd in commands:
        if cmd.startswith("pull:"):
            path = cmd.removeprefix("pull:")
            try:
                data: str | None = probe.pull(path).decode("utf-8", "replace")
            except ProbeError as error:
                if "no such file" not in str(error).lower():
                    raise
                data = None
            outputs.append((cmd, data))
        else:
            outputs.append((cmd, probe.shell(cmd)))
    return Readings(tuple(outputs))


def _result(status: VerificationStatus, summary: Text, evidence: str, kind: str) -> Verification:
    return Verification(status, evidence, summary=summary, kind=kind)


@dataclass
class OutcomeVerifier:
    """The loop's OutcomeCheck over device state. One instance serves one run at a time."""

    kinds: KindRegistry
    probe: Probe | None = None  # default: probe_for(device)
    _before: Readings | None = field(default=None, repr=False)
    _before_error: str = field(default="", repr=False)
    _plan: Plan | None = field(default=None, repr=False)
    _watched: dict[str, str | None] = field(default_factory=dict, repr=False)

    def plan(self, goal: str) -> Plan:
        match = self.kinds.match(goal)
        if match is None or match.kind.check == UNAVAILABLE or match.missing:
            return Plan(goal, match)
        check = CHECKS[match.kind.check]
        return Plan(goal, match, check.commands(match.params))

    def _probe(self, device: Any) -> Probe | None:
        return self.probe if self.probe is not None else probe_for(device)

    def before_run(self, *, goal: str, device: Any) -> None:
        """Read the phone before the run (what the after-reading is compared with)."""
        self._plan, self._before, self._before_error = self.plan(goal), None, ""
        if not self._plan.checkable:
            return
        probe = self._probe(device)
        if probe is None:
            self._before_error = SAY["no_probe"].en
            return
        try:
            self._before = read(probe, self._plan.commands)
            self._watched = _watch(probe)
        except ProbeError as error:
            log.warning("before-run reading failed: %s", error)
            self._before_error = str(error)

    def __call__(self, *, goal: str, result: Any = None, device: Any = None) -> Verification:
        from harness.fastpath import negation

        if negation(goal) == "decline":  # "不要给她打电话", "… No, leave it": nothing was to be done, nothing to say
            return Verification(VerificationStatus.CANNOT_VERIFY, "the request says not to do it")
        plan = self._plan if self._plan is not None and self._plan.goal == goal else self.plan(goal)
        early = self.explain(plan)
        if early is not None:
            return early
        kind = plan.match.kind.name if plan.match else ""
        if self._before is None:
            reason = self._before_error or "before_run was not called"
            return _result(VerificationStatus.CANNOT_VERIFY, SAY["cannot_verify"].format(
                detail=SAY["no_before"].format(reason=reason)), f"no reading from before the run: {reason}", kind)
        probe = self._probe(device)
        if probe is None:
            return _result(VerificationStatus.CANNOT_VERIFY, SAY["cannot_verify"].format(detail=SAY["no_probe"]),
                           "no probe for this device", kind)
        try:
            after = read(probe, plan.commands)
        except ProbeError as error:
            return _result(VerificationStatus.CANNOT_VERIFY, SAY["cannot_verify"].format(
                detail=SAY["read_failed"].format(reason=str(error))), f"after-run reading failed: {error}", kind)
        return self._unasked(plan, self.judge(plan, self._before, after), _watch(probe))

    def _unasked(self, plan: Plan, verdict: Verification, now: dict[str, str | None]) -> Verification:
        """The verdict, plus a sentence for each watched change the request was not about."""
        about = " ".join(plan.commands)  # what the request itself reads is not "unasked"
        if "airplane_mode_on" in about:
            about += " wifi_on bluetooth_on"  # airplane mode switches the radios itself
        changed = [WATCH[c] for c, v in now.items() if _subject(c) not in about and v is not None
                   and self._watched.get(c) is not None and v != self._watched[c]]
        if not changed or verdict.summary is None:
            return verdict
        what = Text("; ".join(t.en for t in changed), "；".join(t.zh for t in changed))
        also = SAY["also"].format(what=what.en)
        summary = Text(verdict.summary.en + also.en, verdict.summary.zh + SAY["also"].zh.format(what=what.zh))
        return Verification(verdict.status, f"{verdict.evidence}; not asked for: {what.en}", summary=summary,
                            kind=verdict.kind)

    def explain(self, plan: Plan) -> Verification | None:
        """The answer for a request that can't be checked (unknown kind, unavailable, details missing)."""
        match = plan.match
        if match is None:
            return _result(VerificationStatus.CANNOT_VERIFY, SAY["no_kind"], "no task kind matches this request", "")
        kind = match.kind
        if kind.check == UNAVAILABLE:
            reason = kind.reason or Text("there is no way to read it")
            return _result(VerificationStatus.CANNOT_VERIFY,
                           Text(SAY["unavailable"].en.format(what=kind.describe.en, reason=reason.en),
                                SAY["unavailable"].zh.format(what=kind.describe.zh, reason=reason.zh)),
                           f"kind {kind.name}: {reason.en}", kind.name)
        if match.missing:
            names = [PARAM_NAMES[m] if m in PARAM_NAMES else Text(m, m) for m in match.missing]
            param = Text(", ".join(n.en for n in names), "、".join(n.zh for n in names))
            return _result(VerificationStatus.CANNOT_VERIFY,
                           Text(SAY["missing"].en.format(param=param.en), SAY["missing"].zh.format(param=param.zh)),
                           f"kind {kind.name}: the request does not give {list(match.missing)}", kind.name)
        return None

    def judge(self, plan: Plan, before: Readings, after: Readings) -> Verification:
        early = self.explain(plan)
        if early is not None:
            return early
        assert plan.match is not None
        kind = plan.match.kind
        finding: Finding = CHECKS[kind.check].judge(plan.match.params, before, after)
        template = SAY[str(finding.status)]
        summary = Text(template.en.format(detail=finding.detail.en), template.zh.format(detail=finding.detail.zh))
        return _result(finding.status, summary, f"kind {kind.name} ({kind.check}): {finding.evidence}", kind.name)


def verify_between(verifier: OutcomeVerifier, goal: str, probe: Probe, act: Any) -> Verification:
    """Read, call `act()` (whatever changes the phone), read again, judge. For benchmarks and tests."""
    plan = verifier.plan(goal)
    if not plan.checkable:
        act()
        early = verifier.explain(plan)
        assert early is not None
        return early
    try:
        before = read(probe, plan.commands)
    except ProbeError as error:
        act()
        return _result(VerificationStatus.CANNOT_VERIFY, SAY["cannot_verify"].format(
            detail=SAY["no_before"].format(reason=str(error))), str(error), plan.match.kind.name if plan.match else "")
    act()
    try:
        after = read(probe, plan.commands)
    except ProbeError as error:
        return _result(VerificationStatus.CANNOT_VERIFY, SAY["cannot_verify"].format(
            detail=SAY["read_failed"].format(reason=str(error))), str(error), plan.match.kind.name if plan.match else "")
    return verifier.judge(plan, before, after)
