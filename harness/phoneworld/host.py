"""What the simulated phone's command services need from the phone: `PhoneHost`, a typing Protocol.

The shell (`shell.py`), the system commands (`syscmds.py`), the tool services (`toolservices.py`) and the
scrcpy server (`scrcpy_server.py`) are given a `SimPhone` (`phone.py`) but are typed against this
protocol, so none of them imports the phone module that builds them (no import cycle, type-only imports
included; tests/test_import_cycles.py). `SimPhone` satisfies it structurally.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol


class PhoneHost(Protocol):
    """The parts of a SimPhone its command services use (see harness.phoneworld.phone.SimPhone)."""

    world: Any  # the PhoneWorld-lite World (harness.phoneworld.world)
    lock: threading.RLock  # serializes access to the world
    fs: Any  # harness.phoneworld.vfs.VirtualFS
    faults: Any  # phone.ScreenFaults: screen capture faults a test sets
    ime: Any  # phone.ImeRegistry: the input methods
    raw_format: int
    raw_header: int
    services: Any  # adbservices.PhoneServices
    adbd: Any  # adbd.Adbd
    scrcpy_servers: list
    denied_permissions: set[str]
    missing_services: set[str]

    def packages(self) -> list[str]: ...

    def props(self) -> dict[str, str]: ...

    def capture_fails(self) -> bool: ...

    def capture_image(self) -> Any: ...

    def launcher_activity(self, package: str) -> str | None: ...

    def settings_get(self, namespace: str, key: str) -> str | None: ...

    def settings_put(self, namespace: str, key: str, value: str) -> None: ...

    def broadcast(self, action: str, extras: dict[str, str]) -> None: ...

    def dumpsys(self, service: str, args: list[str]) -> str | None: ...

    def run_scrcpy_server(self, version: str, options: dict[str, str], io: Any) -> int: ...
