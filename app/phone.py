"""Which phone the window drives, and safe shared access to it.

`PhoneConnection` bundles a Device with how to show it (its label) and, for the simulated phone, the
World behind it. The device is wrapped in `LockedDevice`, so the agent's worker thread, the mirror's
frame fetches and the user's own taps on the mirror never interleave inside one device call.

- `open_simulated(lang, ...)`: PhoneWorld-lite in-process (harness.phoneworld.World + SimDevice), labelled
  "Simulated phone (PhoneWorld-lite)". When a demo task is given, its start state is set up.
- `find_real_phone()`: a USB or Wi-Fi phone through harness.adb.AdbDevice; None when there is none or
  the ADB harness is not installed in this build (the reason is in the returned PhoneProbe).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Action, Device, Observation

log = logging.getLogger(__name__)

SIM_LABEL = Text("Simulated phone (PhoneWorld-lite)", "模拟手机（PhoneWorld-lite）")


class LockedDevice:
    """A Device whose calls are serialised by one re-entrant lock (implements assistant_core Device)."""

    def __init__(self, inner: Device):
        self.inner = inner
        self.lock = threading.RLock()

    def observe(self) -> Observation:
        with self.lock:
            return self.inner.observe()

    def act(self, action: Action) -> None:
        with self.lock:
            self.inner.act(action)

    def installed_apps(self) -> dict[str, str]:
        with self.lock:
            return self.inner.installed_apps()

    def foreground(self) -> str:
        with self.lock:
            return self.inner.foreground()

    def reset(self) -> None:
        with self.lock:
            self.inner.reset()

    def close(self) -> None:
        with self.lock:
            self.inner.close()

    def __getattr__(self, name: str) -> Any:
        # Extra, optional capabilities of the inner device (e.g. SimDevice.world) stay reachable.
        return getattr(self.inner, name)


@dataclass
class PhoneConnection:
    device: LockedDevice
    label: Text
    is_simulated: bool
    world: Any = None
    task_id: str = ""
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def frame(self):
        """The latest full-resolution frame (PIL image) and the device size, or (None, None)."""
        with self.device.lock:
            if self.world is not None:
                image = self.world.screenshot()
                return image, (image.width, image.height)
            obs = self.device.observe()
        if obs.screenshot is None:
            return None, (obs.width, obs.height)
        return obs.screenshot, (obs.width, obs.height)

    def load_task(self, task_id: str, lang: str) -> None:
        """Simulated phone only: start over in the start state of PhoneWorld-lite task `task_id` (the
        scripted demonstration needs the task's own contacts, mail...). Safe from the worker thread:
        the world and device are swapped under the device lock."""
        if not self.is_simulated:
            raise ValueError("only the simulated phone can load a task")
        from harness.phoneworld import SimDevice
        from harness.phoneworld.tasks import make_world

        world, _params = make_world(task_id, seed=self.seed, language=lang)
        with self.device.lock:
            old = self.device.inner
            self.device.inner = SimDevice(world)
            self.world = world
            self.task_id = task_id
        try:
            old.close()
        except Exception:  # the old simulated device holds nothing that matters
            log.exception("closing the previous simulated phone failed")

    def close(self) -> None:
        try:
            self.device.close()
        except Exception:  # closing a vanished phone must not crash the window
            log.exception("closing the phone failed")


def open_simulated(lang: str = "en", *, seed: int = 0, task_id: str = "") -> PhoneConnection:
    """PhoneWorld-lite in-process. With `task_id`, the world starts in that task's start state."""
    from harness.phoneworld import SimDevice, World

    if task_id:
        from harness.phoneworld.tasks import make_world

        world, _params = make_world(task_id, seed=seed, language=lang)
    else:
        world = World(seed=seed, language=lang)
    device = LockedDevice(SimDevice(world))
    return PhoneConnection(device=device, label=SIM_LABEL, is_simulated=True, world=world, task_id=task_id, seed=seed)


@dataclass(frozen=True)
class PhoneProbe:
    """The outcome of looking for a real phone: a connection, or the reason there is none."""

    connection: PhoneConnection | None
    reason: str = ""


def find_real_phone() -> PhoneProbe:
    """A real phone over ADB, or the reason there is none (the ADB harness decides how to look)."""
    try:
        from harness.adb import AdbDevice  # the ADB harness (another part of the project)
    except ImportError as exc:
        return PhoneProbe(None, f"ADB support is not in this build ({exc.name})")
    finder = getattr(AdbDevice, "first_connected", None) or getattr(AdbDevice, "connect_first", None)
    if finder is None:
        return PhoneProbe(None, "harness.adb.AdbDevice offers no way to find a phone yet")
    try:
        device = finder()
    except Exception as exc:  # any failure to find a phone means "no phone", with the reason kept
        return PhoneProbe(None, str(exc))
    if device is None:
        return PhoneProbe(None, "no phone attached")
    name = getattr(device, "serial", "phone")
    label = Text(f"Phone {name}", f"手机 {name}")
    return PhoneProbe(PhoneConnection(device=LockedDevice(device), label=label, is_simulated=False))
