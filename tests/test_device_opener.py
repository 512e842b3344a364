"""The one device opener (harness.opener): the simulated phone, a task's start state, a real phone by its
serial through a real adb server (a private one on a free port, serving a simulated phone over the ADB
wire protocol), and the same clear bilingual errors for a bad target, an unknown task and a missing phone."""

from __future__ import annotations

import pytest

from assistant_core.types import DeviceError
from harness.opener import Target, TargetError, open_phone, parse_target

pytest_plugins = ("tests.adb_fixtures",)


def test_targets_parse_by_one_rule():
    assert parse_target("sim") == Target(True)
    assert parse_target("sim:SettingsTurnOnWifi:3") == Target(True, task_id="SettingsTurnOnWifi", seed=3)
    assert parse_target("R58M12345") == Target(False, serial="R58M12345")
    assert parse_target(None) == Target(False)
    for bad, words in (("sim:", "expected sim"), ("sim:A:B:C", "expected sim"), ("sim:Task:x", "whole number"),
                       ("  ", "empty")):
        with pytest.raises(TargetError) as error:
            parse_target(bad)
        assert words in error.value.message.en and error.value.message.zh


def test_the_simulated_phone_and_a_tasks_start_state():
    plain = open_phone("sim", lang="zh", seed=2)
    assert plain.simulated and plain.task is None and plain.world.language == "zh"
    assert plain.device.observe().width == 1080
    task = open_phone("sim:SettingsTurnOnWifi:3")
    assert task.task.id == "SettingsTurnOnWifi" and task.params is not None
    assert not task.task.is_successful(task.world, task.params)  # the start state, not the goal


def test_unknown_and_held_out_tasks_get_a_clear_message():
    with pytest.raises(TargetError) as unknown:
        open_phone("sim:SettingsTurnOnWfi")
    assert "unknown task" in unknown.value.message.en and "SettingsTurnOnWifi" in unknown.value.message.en
    from harness.phoneworld.tasks import registry

    held = registry.HELDOUT[0].id
    with pytest.raises(TargetError):
        open_phone(f"sim:{held}")  # the held-out split is for evaluation only
    assert open_phone(f"sim:{held}", heldout=True).task.id == held


def test_a_real_phone_by_serial_through_the_adb_server(adb_server, sim_phone):
    phone = open_phone(sim_phone.address, client=adb_server.client())
    try:
        assert not phone.simulated and phone.device.serial == sim_phone.address
        assert phone.device.observe().foreground
    finally:
        phone.device.close()
    with pytest.raises(DeviceError) as missing:
        open_phone("no-such-phone", client=adb_server.client(), wait_s=0.2)
    assert missing.value.message.en and missing.value.message.zh and "Traceback" not in missing.value.message.en
