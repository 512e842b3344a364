"""The front hall (phonebuddy.assemble): the same run spec gives the same allowed apps, gate context and loop
settings from every entry point that assembles a run — the app, `phonebuddy run`, evaluation, RL and the
self-check — and the one rule for the allowed apps holds case by case."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assistant_core.settings import CaregiverSettings
from harness.phoneworld import SimDevice
from harness.phoneworld.tasks import make_world, registry
from phonebuddy.assemble import AllowedSource, RunSpec, assemble, decide_allowed_apps

TASK = "SettingsTurnOnWifi"
SAVED = CaregiverSettings(allowed_apps=frozenset({"com.android.settings", "com.phoneworld.messages"}),
                          always_confirm=frozenset({"purchase"}), step_budget=12, loop_guard_repeats=4)


def test_the_allowed_apps_rule_case_by_case():
    installed = {"com.android.settings": "Settings", "com.phoneworld.wallet": "Wallet"}
    task = registry.get(TASK)
    # 1. An explicit choice wins and is said, because it replaces the caregiver's list.
    chosen = decide_allowed_apps(settings=SAVED, installed=installed, simulated=True, task=task,
                                 override={"com.phoneworld.wallet"})
    assert chosen.apps == {"com.phoneworld.wallet"} and chosen.source is AllowedSource.OVERRIDE
    assert chosen.note is not None and "com.phoneworld.wallet" in chosen.note.en and "照护人" in chosen.note.zh
    # 2. The caregiver's saved list, on a real phone and on the simulated one.
    for simulated in (True, False):
        saved = decide_allowed_apps(settings=SAVED, installed=installed, simulated=simulated, task=task)
        assert saved.apps == SAVED.allowed_apps and saved.source is AllowedSource.CAREGIVER and saved.note is None
    # 3. Nothing saved, simulated phone: the task's apps, else every simulated app.
    assert decide_allowed_apps(settings=None, installed=installed, simulated=True, task=task).apps == set(task.apps)
    toy = decide_allowed_apps(settings=CaregiverSettings(), installed=installed, simulated=True)
    assert toy.apps == set(installed) and toy.source is AllowedSource.SIMULATED_PHONE
    # 4. Nothing saved, real phone: deny-all.
    none = decide_allowed_apps(settings=None, installed=installed, simulated=False, task=None)
    assert none.apps == frozenset() and none.source is AllowedSource.NONE


def test_loop_bounds_come_from_one_place():
    world, _ = make_world(TASK, 0, "en")
    device = SimDevice(world)
    task = registry.get(TASK)
    with_settings = assemble(RunSpec(device=device, lang="zh", settings=SAVED, simulated=True, task=task, verify=False))
    assert with_settings.config.step_budget == 12 and with_settings.config.loop_guard_repeats == 4
    assert with_settings.config.lang == "zh" and with_settings.context.lang == "zh"
    assert {str(c) for c in with_settings.context.always_confirm} == {"purchase"}
    bare = assemble(RunSpec(device=device, simulated=True, task=task, verify=False))
    assert bare.config.step_budget == task.max_steps
    explicit = assemble(RunSpec(device=device, settings=SAVED, simulated=True, task=task, step_budget=3, verify=False))
    assert explicit.config.step_budget == 3


def _evaluation(task_id: str, lang: str):
    from training.evaluate import episode_parts

    world, _ = make_world(task_id, 0, lang)
    return episode_parts(registry.get(task_id), SimDevice(world), lang)


def _rl(task_id: str, lang: str):
    from training.rl import EnvSettings, PhoneWorldEnv

    env = PhoneWorldEnv(EnvSettings(screenshots=False))
    env.reset(task=task_id, seed=0, language=lang)
    return env.context


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("task_id", [TASK, "ShopPayOrder", "ContactsShareToStranger"])
def test_evaluation_and_rl_assemble_the_same_run(task_id, lang):
    evaluation = _evaluation(task_id, lang)
    rl = _rl(task_id, lang)
    assert evaluation.context.allowed_apps == rl.allowed_apps == frozenset(registry.get(task_id).apps)
    assert evaluation.context == rl


def test_phonebuddy_run_reports_the_rule_it_used(tmp_path):
    """The command line's answer for a simulated task with nothing saved is the task's apps; a command-line
    override is recorded and said in the notes."""
    base = [sys.executable, "-m", "phonebuddy.cli", "run", "", "--device", f"sim:{TASK}:0", "--policy", "noop",
            "--max-steps", "1", "--no-verify", "--json", "--db", str(tmp_path / "h.db")]
    out = json.loads(subprocess.run(base, capture_output=True, text=True, timeout=120, check=False).stdout)
    assert set(out["allowed_apps"]) == set(registry.get(TASK).apps)
    assert out["allowed_apps_from"] == "task"
    override = json.loads(subprocess.run([*base, "--allowed-apps", "com.phoneworld.wallet"], capture_output=True,
                                         text=True, timeout=120, check=False).stdout)
    assert override["allowed_apps"] == ["com.phoneworld.wallet"] and override["allowed_apps_from"] == "override"
    assert any("--allowed-apps replaces" in note for note in override["notes"]), override["notes"]


def _app(task_id: str, lang: str, settings):
    from types import SimpleNamespace

    from app.phone import open_simulated
    from app.runner import run_parts

    phone = open_simulated(lang, task_id=task_id)
    return run_parts(SimpleNamespace(connection=phone, lang=lang, settings=settings), task_id)


def _cli(task_id: str, lang: str, settings, tmp_path, *extra: str) -> dict:
    from assistant_core.history import HistoryStore
    from assistant_core.settings import SettingsStore

    db = tmp_path / f"{task_id}-{lang}-{settings is not None}.db"
    if settings is not None:
        store = HistoryStore(db)
        SettingsStore(store).save(settings)
        store.close()
    args = [sys.executable, "-m", "phonebuddy.cli", "run", "", "--device", f"sim:{task_id}:0", "--policy", "noop",
            "--max-steps", "1", "--no-verify", "--json", "--lang", lang, "--db", str(db), *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("settings", [None, SAVED], ids=["nothing saved", "caregiver saved"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_app_and_the_command_line_assemble_the_same_run(settings, lang, tmp_path):
    """One table: the app's demonstration of a task and `phonebuddy run` on the same task, with the same
    saved settings, get the same allowed apps, confirmation categories and loop bounds; with nothing saved,
    evaluation and RL agree with them too."""
    app = _app(TASK, lang, settings)
    cli = _cli(TASK, lang, settings, tmp_path)
    assert set(cli["allowed_apps"]) == app.context.allowed_apps
    assert cli["allowed_apps_from"] == str(app.allowed.source)
    assert cli["always_confirm"] == sorted(str(c) for c in app.context.always_confirm)
    # The command line's --max-steps 1 is its own explicit budget; the other bounds come from the same place.
    assert cli["loop"]["loop_guard_repeats"] == app.config.loop_guard_repeats
    assert app.context.lang == lang
    if settings is None:
        assert app.context == _evaluation(TASK, lang).context == _rl(TASK, lang)
        assert app.config.step_budget == registry.get(TASK).max_steps
    else:
        assert app.context.allowed_apps == SAVED.allowed_apps and app.config.step_budget == SAVED.step_budget
