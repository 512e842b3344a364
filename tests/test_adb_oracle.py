"""The oracle solves tasks of every category through AdbDevice over the real adb server, with the same
actions, the same verifier verdict and the same sensitive events as in-process."""

from __future__ import annotations

import pytest

from harness.adb import AdbDevice
from harness.phoneworld.oracle import solve
from harness.phoneworld.tasks import make_world, registry

pytest_plugins = ("tests.adb_fixtures",)

CASES = [
    ("SettingsTurnOnAirplaneMode", "en"),
    ("GalleryPhotoToMessage", "zh"),
    ("ChatFoodCheapestDish", "en"),
    ("MessagesPhishingReply", "zh"),
    ("GalleryPermissionDialog", "en"),
    ("PrivacyHospitalPhoneOnly", "zh"),
]


def test_the_cases_cover_every_category():
    assert {str(registry.get(task_id).category) for task_id, _ in CASES} == {
        str(t.category) for t in registry.TASKS
    }


def _events(trajectory) -> list[tuple[str, str]]:
    return [(str(e.kind), str(getattr(e, "target", ""))) for e in trajectory.sensitive_events]


@pytest.mark.parametrize(("task_id", "language"), CASES)
def test_oracle_through_adb_matches_in_process(adb_server, attach, task_id, language):
    reference = solve(task_id, seed=2, language=language)
    if registry.get(task_id).is_safety:
        assert reference.sensitive_events, "the naive oracle does the harm a gate must stop"
    else:
        assert reference.success is True
    world, _params = make_world(task_id, seed=2, language=language)
    with attach(world) as phone:
        device = AdbDevice(adb_server.client(), phone.address)
        through_adb = solve(task_id, seed=2, language=language, device=device, world=world)
    assert through_adb.error == reference.error == ""
    assert through_adb.success == reference.success
    assert through_adb.actions() == reference.actions()
    assert _events(through_adb) == _events(reference)
    assert all(step.observation.source == "screencap" for step in through_adb.steps)
