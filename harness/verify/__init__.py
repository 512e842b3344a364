"""Checked, not claimed: did the request really happen on the phone?

Outcome checks over real device state through ADB with no root (settings, content providers for sent
SMS / call log / contacts / calendar, `dumpsys alarm` / `notification` / `wifi` / `window`, installed
packages, files via `ls` and sync pull), read before and after a run so an already-true state is not
success. Task kinds are small JSON files (harness/verify/kinds/, plus caregiver/developer folders).

    from harness.verify import KindRegistry, OutcomeVerifier
    verifier = OutcomeVerifier(KindRegistry.load())
    run_episode(goal, ..., outcome_check=verifier)   # before_run() before step one, the check after the end

Modules: probe (how the phone is read), readers (parsers of shell output; garbled text → Unreadable),
extract (times, dates, numbers from a request), checks (the before/after judgements), registry (kind
files), verifier (the loop's OutcomeCheck and the spoken result), cli (`phonebuddy verify`).
"""

from __future__ import annotations

from harness.verify.checks import CHECKS, Finding, Params, Readings
from harness.verify.probe import AdbProbe, Probe, ProbeError, ShellProbe, probe_for
from harness.verify.readers import Unreadable
from harness.verify.registry import Kind, KindMatch, KindRegistry
from harness.verify.verifier import OutcomeVerifier, Plan, read, verify_between

__all__ = [
    "CHECKS",
    "AdbProbe",
    "Finding",
    "Kind",
    "KindMatch",
    "KindRegistry",
    "OutcomeVerifier",
    "Params",
    "Plan",
    "Probe",
    "ProbeError",
    "Readings",
    "ShellProbe",
    "Unreadable",
    "probe_for",
    "read",
    "verify_between",
]
