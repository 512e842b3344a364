"""Fixtures for tests that drive PhoneWorld-lite through the real adb server (reuse them anywhere).

    pytest_plugins = ("tests.adb_fixtures",)   # in a test module: adb_server, sim_phone, adb_device

- `adb_server` (session): the real adb binary adbutils ships, `server nodaemon` on a free private port
  (never 5037), with its own HOME; killed by pid at the end of the session. While it runs,
  ADBUTILS_ADB_PATH points at /bin/false, so any code path that would make adbutils spawn a server of
  its own fails loudly instead of starting one on 5037.
- `sim_phone` (function): a fresh SimPhone (World seed 0, English) on its own port, `adb connect`ed and
  in state "device"; disconnected and stopped afterwards. `attach_phone(server, world)` does the same
  for a world you built (a task's start state), as a context manager; the `attach` fixture hands it
  out already bound to the session's server: `with attach(world) as phone: ...`.
- `adb_device` (function): an AdbDevice for `sim_phone` (reconnect grace 3 s).
- `phone` / `probe` (module): one SimPhone (World seed = the test module's `PHONE_SEED`,
  default 0) for a whole module whose tests swap worlds into it, and an outcome-check AdbProbe on it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import pytest

from harness.adb import AdbDevice, connect
from harness.adbserver import AdbServer
from harness.phoneworld.phone import SimPhone


@contextlib.contextmanager
def attach_phone(server: AdbServer, world, **phone_kwargs) -> Iterator[SimPhone]:
    """Serve `world` as a phone, connect the adb server to it, and clean up afterwards."""
    phone = SimPhone(world, **phone_kwargs).start()
    address = phone.address
    client = server.client()
    try:
        connect(client, phone.address)
        state = server.wait_state(phone.address)
        assert state == "device", f"simulated phone stuck in {state!r}"
        yield phone
    finally:
        with contextlib.suppress(Exception):
            client.disconnect(address)
        phone.stop()
        _forget(client, address)


def _forget(client, address: str, timeout_s: float = 3.0) -> None:
    """Make sure the session's server no longer lists `address`: a reconnect attempt in flight (a test
    that killed its phone) can put an offline entry back after the first disconnect, and the next test
    file on this server would then see a phone it never attached."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if all(d.serial != address for d in client.list()):
                return
            client.disconnect(address)
        time.sleep(0.1)


@pytest.fixture(scope="session")
def adb_server(tmp_path_factory) -> Iterator[AdbServer]:
    previous = os.environ.get("ADBUTILS_ADB_PATH")
    os.environ["ADBUTILS_ADB_PATH"] = "/bin/false"
    server = AdbServer(home=tmp_path_factory.mktemp("adb-home")).start()
    try:
        yield server
    finally:
        server.stop()
        if previous is None:
            os.environ.pop("ADBUTILS_ADB_PATH", None)
        else:
            os.environ["ADBUTILS_ADB_PATH"] = previous


@pytest.fixture
def sim_phone(adb_server) -> Iterator[SimPhone]:
    from harness.phoneworld.world import World

    with attach_phone(adb_server, World(seed=0, language="en")) as phone:
        yield phone


@pytest.fixture
def attach(adb_server):
    """`with attach(world) as phone:` serves a world you built as a connected phone."""

    def _attach(world, **phone_kwargs):
        return attach_phone(adb_server, world, **phone_kwargs)

    return _attach


@pytest.fixture
def adb_device(adb_server, sim_phone) -> Iterator[AdbDevice]:
    device = AdbDevice(adb_server.client(), sim_phone.address, reconnect_grace_s=3.0)
    yield device
    device.close()


@pytest.fixture(scope="module")
def phone(adb_server, request) -> Iterator[SimPhone]:
    from harness.phoneworld.world import World

    with attach_phone(adb_server, World(seed=getattr(request.module, "PHONE_SEED", 0))) as served:
        yield served


@pytest.fixture(scope="module")
def probe(adb_server, phone):
    from harness.verify import AdbProbe

    device = AdbDevice(adb_server.client(), phone.address, reconnect_grace_s=3.0)
    yield AdbProbe(device)
    device.close()
