"""The front hall: every entry point turns a run spec into a ready loop here, the same way.

    parts = assemble(RunSpec(device=device, lang="zh", settings=settings, simulated=True, task=task))
    events = parts.episode(goal, policy=policy, confirmer=confirmer, user=user, history=history, stop=stop)

The app (`app/runner.py`), `phonebuddy run` (`phonebuddy/run_cli.py`), evaluation and RL
(`training/evaluate.py`, `training/rl.py`), the self-check (`app/selfcheck.py`) and the safety measurement
(`phonebuddy/safety_eval.py`) all build their gate context, loop settings and outcome check with
`assemble`, so "which apps may the assistant touch" has one answer everywhere.

The one rule for the allowed apps (`decide_allowed_apps`):
1. an explicit choice for this run wins (the command line's `--allowed-apps`, a training config's
   `allowed_apps`, the safety measurement's scenario); it is recorded in the result and said as a note,
   because it replaces what the caregiver saved;
2. else, when the settings are locked (changed outside the app, a removed or damaged PIN record or seal,
   a damaged record, a database set aside: `AppsState.LOCKED`), nothing at all, on every phone;
3. else the caregiver's saved list, when one is saved, even an empty one once a PIN guards it
   (`AppsState.SAVED`: an empty saved list is deny-all, never "not set");
4. else, on the simulated phone, the loaded task's own apps, or with no task every app of the simulated
   phone (a toy phone with nothing real on it);
5. else nothing: a real phone stays deny-all until the caregiver sets it up.

The step budget: an explicit budget, else the caregiver's, else the task's, else 30. The other loop bounds
(patience, loop guard) come from the caregiver's settings when saved. The outcome check is
`harness.verify`'s device-level check (the same on a real and a simulated phone).

Layering: this package sits above `assistant_core` and `harness` and takes settings and a device, never
app objects, so the app can use it without a cycle (import-linter contracts in pyproject.toml).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from assistant_core.confirm import Confirmer, Patience
from assistant_core.events import Event
from assistant_core.i18n import Text
from assistant_core.loop import LoopConfig, OutcomeCheck, RunInfo, UserChannel, run_episode
from assistant_core.safety import GateContext, SafetyGate
from assistant_core.settings import AppsState, CaregiverSettings
from assistant_core.types import Device, Policy

DEFAULT_STEP_BUDGET = 30


class AllowedSource(StrEnum):
    OVERRIDE = "override"  # the command line, a training config, a measurement's scenario
    CAREGIVER = "caregiver settings"
    LOCKED = "locked: settings changed outside the app"
    TASK = "task"
    SIMULATED_PHONE = "simulated phone"
    NONE = "none"


@dataclass(frozen=True)
class AllowedApps:
    apps: frozenset[str]
    source: AllowedSource
    note: Text | None = None  # said to the user when an explicit choice replaced the caregiver's list


OVERRIDE_NOTE = Text("--allowed-apps replaces the caregiver's allowed apps for this run: {apps} (the caregiver chose: {caregiver}).")


def decide_allowed_apps(*, settings: CaregiverSettings | None, installed: Iterable[str], simulated: bool,
                        task: Any = None, override: Iterable[str] | None = None) -> AllowedApps:
    """The apps a run may touch, by the one rule in the module docstring."""
    if override is not None:
        apps = frozenset(override)
        saved = settings.allowed_apps if settings is not None else frozenset()
        note = None if apps == saved else OVERRIDE_NOTE.format(apps=", ".join(sorted(apps)) or "-",
                                                               caregiver=", ".join(sorted(saved)) or "-")
        return AllowedApps(apps, AllowedSource.OVERRIDE, note)
    if settings is not None and settings.apps_state is AppsState.LOCKED:
        return AllowedApps(frozenset(), AllowedSource.LOCKED)
    if settings is not None and (settings.allowed_apps or settings.apps_state is AppsState.SAVED):
        return AllowedApps(frozenset(settings.allowed_apps), AllowedSource.CAREGIVER)
    if simulated and task is not None:
        return AllowedApps(frozenset(task.apps), AllowedSource.TASK)
    if simulated:
        return AllowedApps(frozenset(installed), AllowedSource.SIMULATED_PHONE)
    return AllowedApps(frozenset(), AllowedSource.NONE)


@dataclass(frozen=True)
class RunSpec:
    """Everything that decides how a run is set up (not the request itself, nor who answers questions)."""

    device: Device
    lang: str = "en"
    settings: CaregiverSettings | None = None
    simulated: bool = False
    task: Any = None  # a PhoneWorld-lite task whose start state the simulated phone is in
    allowed_override: frozenset[str] | None = None
    step_budget: int | None = None  # an explicit budget (command line, evaluation)
    patience: Patience | None = None  # an explicit confirmation patience (headless answers)
    thumbnails: bool = True
    verify: bool = True  # attach the device-level outcome check
    extra_kinds: tuple[Path, ...] = ()
    profile: Any = None  # assistant_core.privacy.Profile: the user's personal facts and their tiers
    privacy_log: Any = None  # assistant_core.profile_store.PrivacyStore: where remote requests are logged


@dataclass
class RunParts:
    """A ready run: the gate's context, the loop's settings and the outcome check, with what decided them."""

    device: Device
    context: GateContext
    config: LoopConfig
    allowed: AllowedApps
    outcome_check: OutcomeCheck | None = None
    notes: list[Text] = field(default_factory=list)
    profile: Any = None
    privacy_log: Any = None

    def episode(self, goal: str, *, policy: Policy, confirmer: Confirmer, user: UserChannel | None = None,
                history: Any = None, stop: threading.Event | None = None,
                sleep: Callable[[float], None] | None = None, info: RunInfo | None = None,
                gate: SafetyGate | None = None) -> Generator[Event, None, Any]:
        """`run_episode` with these parts (see assistant_core.loop). The gate always carries the privacy
        check (assistant_core.privacy.PrivacyGate: the request and the profile decide what may be typed), and
        a remote policy masks and logs what it sends."""
        from assistant_core.privacy import attach_privacy

        gate = attach_privacy(gate or SafetyGate(), policy, goal=goal, context=self.context, profile=self.profile,
                              log=self.privacy_log)
        return run_episode(goal, device=self.device, policy=policy, confirmer=confirmer, context=self.context,
                           gate=gate, user=user, history=history, config=self.config, stop=stop,
                           sleep=sleep, outcome_check=self.outcome_check, info=info)


def gate_context(settings: CaregiverSettings | None, labels: Mapping[str, str], allowed: AllowedApps,
                 lang: str, contacts: Mapping[str, tuple[str, ...]] | None = None,
                 over_wifi: bool | None = None) -> GateContext:
    always = frozenset(settings.always_confirm) if settings is not None else frozenset()
    return GateContext(allowed_apps=allowed.apps, always_confirm=always, app_labels=dict(labels), lang=lang,
                       contacts=contacts, link_over_wifi=over_wifi)


def loop_config(settings: CaregiverSettings | None, lang: str, *, task: Any = None, step_budget: int | None = None,
                patience: Patience | None = None, thumbnails: bool = True) -> LoopConfig:
    """The loop's bounds: explicit values, else the caregiver's, else the task's budget, else the defaults."""
    budget = step_budget or (settings.step_budget if settings is not None else None) or (
        task.max_steps if task is not None else DEFAULT_STEP_BUDGET)
    overrides: dict[str, Any] = {"step_budget": budget, "lang": lang, "thumbnails": thumbnails}
    if patience is not None:
        overrides["patience"] = patience
    if settings is not None:
        return LoopConfig.from_settings(settings, **overrides)
    return LoopConfig(**overrides)


def assemble(spec: RunSpec) -> RunParts:
    """The run's parts from its spec (see the module docstring)."""
    from harness.fastpath import contact_book, read_contacts
    from harness.tools import link_over_wifi

    labels = dict(spec.device.installed_apps())
    allowed = decide_allowed_apps(settings=spec.settings, installed=labels, simulated=spec.simulated,
                                  task=spec.task, override=spec.allowed_override)
    notes = [allowed.note] if allowed.note is not None else []
    check = None
    if spec.verify:
        from harness.verify import KindRegistry, OutcomeVerifier

        kinds = KindRegistry.load(extra=list(spec.extra_kinds))
        notes.extend(Text(p, p) for p in kinds.problems)
        check = OutcomeVerifier(kinds)
    return RunParts(
        device=spec.device,
        # The phone's contacts: tool read-backs name a recipient from them (assistant_core.toolgate).
        context=gate_context(spec.settings, labels, allowed, spec.lang, contact_book(read_contacts(spec.device)),
                             link_over_wifi(spec.device)),
        config=loop_config(spec.settings, spec.lang, task=spec.task, step_budget=spec.step_budget,
                           patience=spec.patience, thumbnails=spec.thumbnails),
        allowed=allowed, outcome_check=check, notes=notes, profile=spec.profile, privacy_log=spec.privacy_log,
    )
