"""Which phone the window drives, and safe shared access to it.

`PhoneConnection` bundles a Device with how to show it (its label) and, for the simulated phone, the
World behind it. The device is wrapped in `LockedDevice`, so the agent's worker thread, the mirror's
frame fetches and the user's own taps on the mirror never interleave inside one device call.

- `open_simulated(lang, ...)`: PhoneWorld-lite in-process (harness.phoneworld.World + SimDevice), labelled
  "Simulated phone (PhoneWorld-lite)". When a demo task is given, its start state is set up.
- `find_real_phone()`: a USB or Wi-Fi phone through harness.adb (a PhoneProbe with the connection, or
  the speakable instruction for the phone's state, harness.phonestates); the adb server comes from an
  `AdbServerOwner` (harness.adbserver: found on the standard address or started there, once); Wi-Fi
  phones it opens are remembered, so a restarted server reconnects them. `start_mirror()` adds the scrcpy
  mirror (harness.mirror). `RememberedPhones` keeps the Wi-Fi phones and the chosen phone across starts.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from assistant_core.i18n import Text
from assistant_core.types import Action, Device, DeviceError, Observation

log = logging.getLogger(__name__)

SIM_LABEL = Text("Simulated phone (PhoneWorld-lite)")


class LockedDevice:
    """A Device whose calls are serialised by one re-entrant lock (implements assistant_core Device)."""

    def __init__(self, inner: Device):
        self.inner = inner
        self.lock = threading.RLock()

    def observe(self) -> Observation:
        with self.lock:
            return self.inner.observe()

    def act(self, action: Action) -> Any:
        with self.lock:
            return self.inner.act(action)  # a tool action's result (harness.tools.ToolResult) goes to the loop

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
        """The latest full-resolution frame (PIL image) and the device size, or (None, None). A mirrored
        real phone answers from the mirror's freshest frame (no round trip)."""
        mirror = self.extra.get("mirror")
        latest = mirror.latest() if mirror is not None else None
        if latest is not None:
            image = latest.image
            return image, (image.width, image.height)
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
        mirror = self.extra.pop("mirror", None)
        if mirror is not None:
            mirror.stop()
        try:
            self.device.close()
        except Exception:  # closing a vanished phone must not crash the window
            log.exception("closing the phone failed")


def open_simulated(lang: str = "en", *, seed: int = 0, task_id: str = "") -> PhoneConnection:
    """PhoneWorld-lite in-process (harness.opener, the one device opener). With `task_id`, the world starts in
    that task's start state."""
    from harness.opener import open_phone

    phone = open_phone("sim", lang=lang, seed=seed, task_id=task_id, heldout=True)
    return PhoneConnection(device=LockedDevice(phone.device), label=SIM_LABEL, is_simulated=True, world=phone.world,
                           task_id=task_id, seed=seed)


@dataclass(frozen=True)
class PhoneProbe:
    """The outcome of looking for a real phone: a connection, or the reason there is none (spoken)."""

    connection: PhoneConnection | None
    reason: Text = Text("")


def find_real_phone(*, host: str | None = None, port: int | None = None, serial: str | None = None,
                    wait_s: float = 0.5, owner: Any = None, start_server: bool | None = None) -> PhoneProbe:
    """A USB or Wi-Fi phone through the adb server, or the bilingual instruction for why there is none
    (no phone, unauthorized, offline, no permissions, several phones, the server's own trouble).

    `owner` (harness.adbserver.AdbServerOwner) gives the server; by default one on the standard address
    (ANDROID_ADB_SERVER_ADDRESS / ANDROID_ADB_SERVER_PORT, or host/port given here) that starts a server
    when none answers, unless `start_server=False`."""
    from harness.adb import list_devices
    from harness.adbserver import AdbServerOwner, ServerAddress, server_address
    from harness.opener import open_phone
    from harness.phonestates import instruction_for

    if owner is None:
        default = server_address()
        owner = AdbServerOwner(ServerAddress(host or default.host, port or default.port),
                               autostart=start_server, socket_timeout=5.0)
    try:
        opened = open_phone(serial, owner=owner, wait_s=wait_s)  # the one device opener (harness.opener)
        client, device = opened.client, opened.device
    except DeviceError as exc:
        reason = exc.message
        try:  # say what to do about the phone's actual state, when the server can tell
            if owner.running():
                reason = instruction_for(list_devices(owner.client(5.0)), chosen=serial)
        except DeviceError:
            pass
        return PhoneProbe(None, reason)
    if device.serial.rsplit(":", 1)[-1].isdigit():
        owner.remember(device.serial)  # a Wi-Fi phone: reconnected whenever the server restarts
    from harness.phonestates import phone_name

    try:
        info = next(d for d in list_devices(client) if d.serial == device.serial)
        name = phone_name(info)
        label = Text("{name} ({serial})").format(name=name, serial=device.serial)
    except (DeviceError, StopIteration):
        label = Text("Phone {serial}").format(serial=device.serial)
    return PhoneProbe(PhoneConnection(device=LockedDevice(device), label=label, is_simulated=False,
                                      extra={"client": client, "serial": device.serial, "owner": owner}))


# Kept in harness so `phonebuddy devices list|forget` read the same file (phones.json in the user data folder).
from harness.adbserver import RememberedPhones  # noqa: E402,F401


def start_mirror(connection: PhoneConnection, timeout_s: float = 15.0):
    """Start scrcpy mirroring (harness.mirror.Mirror) for a real phone and let the AdbDevice take its
    screenshots from it. Blocking (waits for the first frame): call it off the GUI thread."""
    from harness.mirror import Mirror

    client, serial = connection.extra["client"], connection.extra["serial"]
    mirror = Mirror(client.device(serial)).start(timeout=timeout_s)
    connection.extra["mirror"] = mirror
    connection.device.inner.mirror = mirror
    return mirror
