"""Every task against the oracle: solvable on five seeds (and in Chinese), safety tasks really reach
their sensitive step, and every verifier rejects the untouched start, a wrong parameter and a half-done
run. Worlds run in-process and the oracle observes the UI tree only (no screenshots), to stay fast."""

from __future__ import annotations

import pytest

from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import TaskCategory, make_world, registry
from harness.phoneworld.tasks.base import event_kind

SEEDS = range(5)
NON_SAFETY = [t.id for t in registry.TASKS if t.category is not TaskCategory.SAFETY]
SAFETY = [t.id for t in registry.TASKS if t.category is TaskCategory.SAFETY]
ALL = [t.id for t in registry.TASKS]


def run(task_id: str, seed: int, lang: str = "en", **kw):
    traj = solve(task_id, seed, lang, **kw)
    assert not traj.error, traj.error
    return traj


@pytest.mark.parametrize("task_id", NON_SAFETY)
def test_oracle_solves_every_task_on_five_seeds(task_id):
    for seed in SEEDS:
        traj = run(task_id, seed)
        assert traj.success, f"{task_id} seed {seed}: {[s.action.to_dict() for s in traj.steps]}"
        assert traj.steps[-1].action.kind == "finish"


@pytest.mark.parametrize("task_id", ALL)
def test_oracle_works_in_chinese(task_id):
    traj = run(task_id, 1, "zh")
    task = registry.get(task_id)
    if task.is_safety:
        assert any(event_kind(e) in task.sensitive_kinds for e in traj.sensitive_events)
        assert traj.success is False
    else:
        assert traj.success, [s.action.to_dict() for s in traj.steps]
    assert all(s.thought for s in traj.steps)


@pytest.mark.parametrize("task_id", SAFETY)
def test_naive_oracle_reaches_the_sensitive_step_on_safety_tasks(task_id):
    task = registry.get(task_id)
    assert task.sensitive_kinds, "a safety task names the harm it guards against"
    for seed in range(3):
        traj = run(task_id, seed)
        kinds = {event_kind(e) for e in traj.sensitive_events}
        assert kinds & task.sensitive_kinds, f"seed {seed}: no harm of {task.sensitive_kinds} happened ({kinds})"
        assert traj.success is False
        assert task.user_request(traj.params).en and task.user_request(traj.params).zh


@pytest.mark.parametrize("task_id", ALL)
def test_verifier_rejects_the_untouched_start_state_and_reset_restores_it(task_id):
    task = registry.get(task_id)
    for seed in range(3):
        world, params = make_world(task_id, seed)
        start_xml = world.ui_xml()
        if task.is_safety:
            assert task.is_successful(world, params), "nothing has happened yet, so nothing harmful"
        else:
            assert not task.is_successful(world, params), f"seed {seed}: the start state already passes"
        solve(task_id, seed, world=world)
        world.reset()
        assert world.ui_xml() == start_xml
        assert task.is_successful(world, params) is task.is_safety
        assert world.sensitive_events == []


def has_wrong_params(task_id: str) -> bool:
    task = registry.get(task_id)
    return task.perturb(task.params(task.rng_for(0)), task.rng_for(0)) is not None


WITH_PARAMS = [t for t in NON_SAFETY if has_wrong_params(t)]
PARAMLESS = [t for t in NON_SAFETY if not has_wrong_params(t)]


@pytest.mark.parametrize("task_id", WITH_PARAMS)
def test_verifier_rejects_a_run_with_a_wrong_parameter(task_id):
    task = registry.get(task_id)
    for seed in range(3):
        world, params = make_world(task_id, seed)
        wrong = task.perturb(params, task.rng_for(seed + 100))
        assert wrong != params
        traj = solve(task_id, seed, world=world, params=wrong)
        assert not traj.error, traj.error
        assert not task.is_successful(world, params), f"seed {seed}: solving for {wrong} also passes {params}"


def neighbour(task_id: str) -> str:
    """Another non-safety task whose first app is the same (its script acts in the same app)."""
    app = registry.get(task_id).apps[0]
    return next(t for t in NON_SAFETY if t != task_id and registry.get(t).apps[0] == app)


@pytest.mark.parametrize("task_id", PARAMLESS)
def test_verifier_without_parameters_rejects_a_neighbouring_tasks_run(task_id):
    """Tasks with nothing to get wrong in their parameters (turn on Wi-Fi) still reject the run of a
    different request in the same app (turning on Bluetooth, connecting to a network...)."""
    task, other = registry.get(task_id), registry.get(neighbour(task_id))
    for seed in range(2):
        world, params = make_world(task_id, seed)
        solve(other.id, seed, world=world, params=other.params(other.rng_for(seed)))
        assert not task.is_successful(world, params), f"{other.id}'s run passes {task_id}"


@pytest.mark.parametrize("task_id", NON_SAFETY)
def test_verifier_rejects_a_half_done_run(task_id):
    task = registry.get(task_id)
    for seed in range(2):
        full = run(task_id, seed)
        acting = [s.index for s in full.steps if not s.action.is_passive]
        world, params = make_world(task_id, seed)
        solve(task_id, seed, world=world, max_steps=acting[-1])  # everything but the last real action
        assert not task.is_successful(world, params), f"seed {seed}: passes without its last step"


@pytest.mark.parametrize("task_id", ["MailMeetingToCalendar", "ChatHotelBookingUnderBudget", "SettingsChangeLanguage"])
def test_same_seed_same_start_screenshot_and_reset_restores_it(task_id):
    a, _ = make_world(task_id, 5, "zh")
    b, _ = make_world(task_id, 5, "zh")
    first = a.screenshot().tobytes()
    assert first == b.screenshot().tobytes()
    solve(task_id, 5, "zh", world=a)
    a.reset()
    assert a.screenshot().tobytes() == first


def test_registry_is_sorted_unique_and_big_enough():
    ids = [t.id for t in registry.TASKS]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    counts = {c: len(registry.by_category(c)) for c in TaskCategory}
    assert counts[TaskCategory.SINGLE_APP] >= 25
    assert counts[TaskCategory.CROSS_APP] >= 15
    assert counts[TaskCategory.MINI_APP] >= 10
    assert counts[TaskCategory.SAFETY] >= 10


def test_unknown_task_names_close_matches():
    with pytest.raises(KeyError) as err:
        registry.get("SettingsTurnOnWiFi")
    assert "SettingsTurnOnWifi" in str(err.value)
    with pytest.raises(KeyError) as err:
        registry.get("Nonsense")
    assert "phonebuddy world list" in str(err.value)
    with pytest.raises(KeyError, match="unknown task"):
        registry.get(None)  # type: ignore[arg-type]
    with pytest.raises(KeyError) as err:
        registry.get("settingsturnonwifi")
    assert "did you mean SettingsTurnOnWifi" in str(err.value)


def test_params_are_seeded_and_instructions_bilingual():
    for task in registry.TASKS:
        a, b = task.params(task.rng_for(7)), task.params(task.rng_for(7))
        assert a == b
        text = task.instruction(a)
        assert text.en.strip() and text.zh.strip() and text.en != text.zh


@pytest.mark.parametrize("task_id", [t.id for t in registry.by_category(TaskCategory.MINI_APP)])
def test_oracle_fills_required_form_fields_only(task_id):
    """Demonstrations should not teach filling optional personal fields (phone, ID number, birthday)."""
    world, _ = make_world(task_id, 0)
    assert solve(task_id, 0, world=world).success
    assert world.privacy_log, "the booking or order went through a form"
    assert all(sub.personal_count == 0 for sub in world.privacy_log)


def test_oracle_scrolls_a_long_list_to_find_its_target():
    traj = solve("PhoneCallContact", 0, "zh")
    assert traj.success
    assert any(s.action.kind == "scroll" for s in traj.steps)
