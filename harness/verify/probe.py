"""Probes: how outcome checks read a phone — shell command lines and small file pulls, nothing else.

    probe = AdbProbe(adb_device)              # harness.adb.AdbDevice: `adb shell` + sync pull, no root
    probe = ShellProbe(SimPhone(world))       # in-process: the simulated phone's own shell (same text)
    probe = probe_for(device)                 # picks one for an AdbDevice or a SimDevice, else None
    text = probe.shell("settings get global wifi_on")
    data = probe.pull("/sdcard/Documents/Notes/Ideas.txt")

Contract: `shell` returns stdout and stderr together as text (what `adb shell` prints); `pull` returns
the file's bytes, raising `ProbeError` for a missing file or one over `MAX_PULL_BYTES`. Any failure to
talk to the phone is a `ProbeError` (checks turn it into cannot_verify, never into a verdict).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger(__name__)

MAX_PULL_BYTES = 256 * 1024


class ProbeError(RuntimeError):
    """The phone could not be read (gone, refused, a file too big or missing)."""


@runtime_checkable
class Probe(Protocol):
    def shell(self, command: str) -> str: ...

    def pull(self, path: str) -> bytes: ...


class AdbProbe:
    """Reads a real phone (or the simulated one) through harness.adb.AdbDevice and the adb server."""

    def __init__(self, device: Any, *, timeout_s: float = 15.0):
        self.device = device
        self.timeout_s = timeout_s

    def shell(self, command: str) -> str:
        from assistant_core.types import DeviceError

        try:
            return self.device.shell(command, timeout=self.timeout_s)
        except (DeviceError, OSError) as error:
            raise ProbeError(f"`{command}` failed: {error}") from error

    def pull(self, path: str) -> bytes:
        from adbutils.errors import AdbError

        try:
            sync = self.device.client.device(self.device.serial).sync
            info = sync.stat(path)
            if info.mode == 0:
                raise ProbeError(f"{path}: no such file")
            if info.size > MAX_PULL_BYTES:
                raise ProbeError(f"{path}: {info.size} bytes is more than a check pulls ({MAX_PULL_BYTES})")
            return sync.read_bytes(path)
        except (AdbError, OSError) as error:
            raise ProbeError(f"pull {path} failed: {error}") from error


class _Collect:
    def __init__(self) -> None:
        self.data = bytearray()

    def out(self, data: bytes | str) -> None:
        self.data += data.encode("utf-8") if isinstance(data, str) else data

    err = out

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        return b""

    def cancelled(self) -> bool:
        return False


class ShellProbe:
    """Reads a SimPhone in-process through its shell interpreter: the same command lines and the same
    output text as over adb, without sockets (the fast path for benchmarks and RL rewards)."""

    def __init__(self, phone: Any):
        self.phone = phone

    def shell(self, command: str) -> str:
        io = _Collect()
        self.phone.shell.run(command, io)
        return io.data.decode("utf-8", "replace")

    def pull(self, path: str) -> bytes:
        from harness.phoneworld.vfs import FsError

        self.shell("true")  # the shell refreshes the files the world's apps keep on shared storage
        info = self.phone.fs.stat(path)
        if info is None or info.is_dir:
            raise ProbeError(f"{path}: no such file")
        if info.size > MAX_PULL_BYTES:
            raise ProbeError(f"{path}: {info.size} bytes is more than a check pulls ({MAX_PULL_BYTES})")
        try:
            return self.phone.fs.read(path)
        except FsError as error:
            raise ProbeError(str(error)) from error


def probe_for(device: Any) -> Probe | None:
    """A probe for a Device: AdbDevice → AdbProbe; SimDevice → ShellProbe over its world; else None."""
    if hasattr(device, "shell") and hasattr(device, "serial"):
        return AdbProbe(device)
    world = getattr(device, "world", None)
    if world is not None:
        from harness.phoneworld.phone import SimPhone

        return ShellProbe(SimPhone(world))
    return None
