"""One device opener: the simulated phone or a real phone by its serial, with the same clear errors everywhere.

    phone = open_phone("sim")                       # a fresh PhoneWorld-lite phone, in-process
    phone = open_phone("sim:SettingsTurnOnWifi:3")  # a task's start state (phone.task, phone.params)
    phone = open_phone("R58M12345")                 # a real phone through the product's adb server
    phone = open_phone(None)                        # the only real phone attached

Users: the app (`app/phone.py`: `open_simulated`, `find_real_phone`), `phonebuddy run`
(`phonebuddy/run_cli.py`), `phonebuddy devices info` (`harness/cli.py`), `phonebuddy capture`
(`harness/phoneworld/cli.py`), GRPO's phones (`training/rl_env.py`) and the self-check (`app/selfcheck.py`).

Every failure is a `DeviceError` with a bilingual `message`: a bad target (`sim:` with no task, a seed
that is not a number), an unknown task (with the closest ids), no adb server, no phone, several phones,
a phone that is unauthorized or offline (harness.adb.open_device's own messages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Device, DeviceError

SIM = "sim"


class TargetError(DeviceError):
    """A device target that names no phone (a malformed `sim:...`, an unknown task)."""


@dataclass(frozen=True)
class Target:
    """A parsed device target: the simulated phone (with a task and seed) or a real phone's serial."""

    simulated: bool
    task_id: str = ""
    seed: int = 0
    serial: str | None = None  # None: the only phone attached


@dataclass
class OpenedPhone:
    """An open phone and what it came with (the world and task of a simulated one; the adb client of a real one)."""

    device: Device
    target: Target
    world: Any = None
    task: Any = None
    params: Any = None
    client: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def simulated(self) -> bool:
        return self.target.simulated


BAD_SIM = Text("{target}: expected sim, sim:TASK or sim:TASK:SEED.")
BAD_SEED = Text("{target}: the seed must be a whole number.")
EMPTY = Text("The device is empty: give sim or a phone's serial.")


def parse_target(text: str | None, *, seed: int = 0, task_id: str = "") -> Target:
    """`sim`, `sim:TASK[:SEED]`, a serial, or None (the only real phone). TargetError when malformed."""
    if text is None:
        return Target(False)
    if text == SIM:
        return Target(True, task_id=task_id, seed=seed)
    if text.startswith(SIM + ":"):
        parts = text.split(":")
        if len(parts) > 3 or not parts[1]:
            raise TargetError(BAD_SIM.format(target=text))
        if len(parts) == 3:
            try:
                seed = int(parts[2])
            except ValueError:
                raise TargetError(BAD_SEED.format(target=text)) from None
        return Target(True, task_id=parts[1], seed=seed)
    if not text.strip():
        raise TargetError(EMPTY)
    return Target(False, serial=text)


def open_phone(target: str | Target | None, *, lang: str = "en", seed: int = 0, task_id: str = "",
               client: Any = None, owner: Any = None, host: str | None = None, port: int | None = None,
               announce: Callable[[Text], None] | None = None, wait_s: float = 5.0,
               screenshots: bool = True, heldout: bool = False, **device_options: Any) -> OpenedPhone:
    """Open the phone `target` names (see the module docstring). A real phone comes through `client`, else
    `owner` (harness.adbserver.AdbServerOwner), else the product's adb server on host/port (started when
    none answers; `announce` hears what it says). `device_options` go to harness.adb.AdbDevice. A held-out
    task (harness.phoneworld.tasks.heldout) opens only with `heldout=True`."""
    parsed = target if isinstance(target, Target) else parse_target(target, seed=seed, task_id=task_id)
    if parsed.simulated:
        return _open_simulated(parsed, lang, screenshots, heldout)
    from harness.adb import open_device

    if client is None:
        if owner is not None:
            client = owner.ensure()
        else:
            from harness.adbserver import product_client

            client = product_client(host, port, announce=announce)
    device = open_device(client, parsed.serial, wait_s=wait_s, **device_options)
    return OpenedPhone(device, parsed, client=client)


def _open_simulated(target: Target, lang: str, screenshots: bool, heldout: bool) -> OpenedPhone:
    from harness.phoneworld import SimDevice, World

    if not target.task_id:
        world = World(seed=target.seed, language=lang)
        return OpenedPhone(SimDevice(world, screenshots=screenshots), target, world=world)
    from harness.phoneworld.tasks import UnknownTaskError, make_world, registry

    try:
        task = registry.get_any(target.task_id) if heldout else registry.get(target.task_id)
    except UnknownTaskError as error:
        words = str(error).strip("'\"")
        raise TargetError(Text(words, words)) from None
    world, params = make_world(target.task_id, target.seed, lang)
    return OpenedPhone(SimDevice(world, screenshots=screenshots), target, world=world, task=task, params=params)
