"""One watcher of the phones the adb server knows, over adb's `host:track-devices-l` (no Qt, no polling).

    watcher = DeviceWatcher(owner, on_event=print).start()   # owner: harness.adbserver.AdbServerOwner
    ...
    watcher.stop()

The adb server pushes the whole device list whenever it changes, so a phone plugged in, pulled out, or
changing state (unauthorized -> device, device -> offline) is reported as soon as the server sees it.
`on_event(PhoneEvent)` is called on the watcher's thread with the change and the bilingual sentence to
say (harness.phonestates). When the server dies (killed, crashed), the watcher reports SERVER_LOST, has
the owner start it again (which reconnects remembered Wi-Fi phones), reports SERVER_BACK, and carries
on; when it cannot, SERVER_FAILED with the reason, retried every `retry_s`.

Also here: `pair()` (`adb pair HOST:PORT CODE` through the server) and `mdns_services()`.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from assistant_core.i18n import Text
from assistant_core.types import DeviceError, DeviceOffline
from harness.adb import DeviceInfo
from harness.adbserver import AdbServerOwner
from harness.phonestates import STATES, named, state_instruction

log = logging.getLogger(__name__)

_KEY = re.compile(r"^(usb|product|model|device|transport_id):")
_TCP_SERIAL = re.compile(r"^[\w.\-\[\]:]+:\d+$")


class PhoneEventKind(StrEnum):
    ADDED = "added"  # a serial the server did not list before
    CHANGED = "changed"  # same serial, new state
    REMOVED = "removed"  # gone from the list (unplugged, Wi-Fi lost, phone stopped)
    SERVER_LOST = "server_lost"  # the adb server stopped answering; restarting it
    SERVER_BACK = "server_back"  # it answers again
    SERVER_FAILED = "server_failed"  # it cannot be reached or started (message says why); retrying


@dataclass(frozen=True)
class PhoneEvent:
    kind: PhoneEventKind
    message: Text
    device: DeviceInfo | None = None
    previous_state: str = ""

    @property
    def serial(self) -> str:
        return self.device.serial if self.device else ""


def parse_devices_l(payload: str) -> list[DeviceInfo]:
    """One `track-devices-l` message (the `adb devices -l` lines) -> DeviceInfo. A state may hold spaces
    ("no permissions (...); see [...]"): it runs up to the first `key:value` field."""
    out = []
    for line in payload.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        serial, rest = parts[0], parts[1:]
        state_words: list[str] = []
        fields: dict[str, str] = {}
        for word in rest:
            if _KEY.match(word):
                key, _, value = word.partition(":")
                fields[key] = value
            elif not fields:
                state_words.append(word)
        tcp = bool(_TCP_SERIAL.match(serial)) or serial.startswith("adb-")
        out.append(DeviceInfo(serial, " ".join(state_words), "tcp" if tcp else "usb",
                              model=fields.get("model", ""), product=fields.get("product", "")))
    return out


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionResetError("the adb server closed the connection")
        data += chunk
    return data


def _host_command(sock: socket.socket, command: str) -> None:
    raw = command.encode()
    sock.sendall(b"%04x" % len(raw) + raw)
    status = _read_exactly(sock, 4)
    if status != b"OKAY":
        length = int(_read_exactly(sock, 4), 16)
        raise ConnectionError(f"adb server refused {command}: {_read_exactly(sock, length).decode(errors='replace')}")


def describe_change(previous: DeviceInfo | None, current: DeviceInfo | None, *, was_ready: bool = False) -> PhoneEvent | None:
    """The event for one serial going from `previous` to `current` (None: absent); None when unchanged.
    `was_ready`: this serial was usable earlier (so coming back is "back", and a Wi-Fi phone whose
    connection dropped, which adb keeps listed as offline, is "disconnected")."""
    if previous is None and current is None:
        return None
    if current is None:
        assert previous is not None
        return PhoneEvent(PhoneEventKind.REMOVED, STATES["unplugged"], previous, previous.state)
    if previous is not None and previous.state == current.state:
        return None
    kind = PhoneEventKind.ADDED if previous is None else PhoneEventKind.CHANGED
    if current.state == "device":
        message = named("back" if was_ready else "plugged", current)
    elif previous is not None and previous.state == "device" and current.state == "offline":
        message = STATES["unplugged"]
    else:
        message = state_instruction(current.state, current.serial)
    return PhoneEvent(kind, message, current, previous.state if previous else "")


class DeviceWatcher:
    """Follows the adb server's device list on a daemon thread; see the module docstring."""

    def __init__(self, owner: AdbServerOwner, on_event: Callable[[PhoneEvent], None], *, retry_s: float = 2.0):
        self.owner = owner
        self.on_event = on_event
        self.retry_s = retry_s
        self._devices: dict[str, DeviceInfo] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.updates = 0  # device-list messages received (tests wait on it)
        self._ready_before: set[str] = set()  # serials that were usable at some point
        self._lost = False  # the server went away and has not answered since
        self._synced = threading.Event()

    def start(self) -> DeviceWatcher:
        self._thread = threading.Thread(target=self._run, name="adb-device-watch", daemon=True)
        self._thread.start()
        return self

    def wait_synced(self, timeout: float = 10.0) -> bool:
        """True once the first device list arrived (from the current server)."""
        return self._synced.wait(timeout)

    def devices(self) -> list[DeviceInfo]:
        with self._lock:
            return list(self._devices.values())

    def stop(self) -> None:
        self._stop.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _emit(self, event: PhoneEvent) -> None:
        try:
            self.on_event(event)
        except Exception:  # a listener's bug must not end the watching
            log.exception("device event listener failed on %s", event.kind)

    def _run(self) -> None:
        failed_reason = ""
        first = True
        while not self._stop.is_set():
            try:
                self.owner.ensure()
                if first:  # a server found running has not seen our remembered Wi-Fi phones yet
                    first = False
                    self.owner.reconnect_remembered()
            except DeviceError as exc:
                if exc.message.en != failed_reason:  # say it once, not every retry
                    failed_reason = exc.message.en
                    self._emit(PhoneEvent(PhoneEventKind.SERVER_FAILED, exc.message))
                self._stop.wait(self.retry_s)
                continue
            failed_reason = ""
            try:
                self._follow()
            except (OSError, ValueError) as exc:
                if self._stop.is_set():
                    break
                log.info("adb server connection lost: %s", exc)
            if self._stop.is_set():
                break
            self._synced.clear()
            with self._lock:
                self._devices.clear()  # the restarted server starts with none; its list re-announces them
            if not self._lost:
                self._lost = True
                self._emit(PhoneEvent(PhoneEventKind.SERVER_LOST, STATES["server_lost"]))
            self._stop.wait(0.2)

    def _follow(self) -> None:
        """Read the server's device lists until it goes away; after a loss, the first list is SERVER_BACK."""
        address = self.owner.address
        sock = socket.create_connection((address.host, address.port), timeout=5)
        self._sock = sock
        try:
            _host_command(sock, "host:track-devices-l")
            sock.settimeout(None)
            first = True
            while not self._stop.is_set():
                length = int(_read_exactly(sock, 4), 16)
                payload = _read_exactly(sock, length).decode("utf-8", "replace") if length else ""
                if first:
                    first = False
                    if self._lost:
                        self._lost = False
                        self._emit(PhoneEvent(PhoneEventKind.SERVER_BACK, STATES["server_back"]))
                self._update(parse_devices_l(payload))
        finally:
            self._sock = None
            sock.close()

    def _update(self, listed: list[DeviceInfo]) -> None:
        now = {d.serial: d for d in listed}
        with self._lock:
            before = self._devices
            self._devices = now
        self.updates += 1
        for serial in list(before) + [s for s in now if s not in before]:
            event = describe_change(before.get(serial), now.get(serial), was_ready=serial in self._ready_before)
            if event is not None:
                if event.device is not None and event.device.state == "device":
                    self._ready_before.add(serial)
                self._emit(event)
        self._synced.set()


# --- wireless debugging -------------------------------------------------------------------------------


def client_state(client, serial: str, *, wait_s: float = 3.0) -> str:
    """The server's state for `serial`, waiting out connecting/authorizing/offline for up to `wait_s`."""
    import time

    from harness.adb import list_devices

    deadline = time.monotonic() + wait_s
    while True:
        state = next((d.state for d in list_devices(client) if d.serial == serial), "gone")
        if state not in ("connecting", "authorizing", "offline", "gone") or time.monotonic() >= deadline:
            return state
        time.sleep(0.1)


def connect_wifi(client, address: str, *, timeout: float = 10.0, wait_s: float = 3.0) -> tuple[str, str]:
    """`adb connect HOST:PORT` that leaves nothing dead behind: (serial, state) when the phone answered
    (`device`, or `unauthorized` while it waits for the user's Allow). When it did not, the server's
    `offline` entry for it is disconnected (adb keeps one after a timed-out connect, and every later
    start would then say "unplug the cable") and DeviceOffline says why, in words: refused (the address
    or port is wrong) or silent (not on this network, or Wireless debugging off)."""
    from harness.adb import connect
    from harness.adbserver import drop_if_dead

    serial = address.strip() if ":" in address else f"{address.strip()}:5555"
    try:
        serial = connect(client, serial, timeout=timeout)
    except DeviceOffline as exc:  # "failed to authenticate": the phone is waiting for "Allow"
        if "authenticate" in exc.detail or client_state(client, serial, wait_s=1.0) == "unauthorized":
            return serial, client_state(client, serial, wait_s=wait_s)
        drop_if_dead(client, serial)
        key = "connect_refused" if "refused" in exc.detail.lower() else "connect_silent"
        raise type(exc)(STATES[key].format(address=serial), detail=exc.detail) from exc
    state = client_state(client, serial, wait_s=wait_s)
    if state in ("offline", "connecting", "gone"):
        drop_if_dead(client, serial)
        raise DeviceOffline(STATES["connect_silent"].format(address=serial), detail=f"state {state} after connect")
    return serial, state



def _status_block(conn) -> str:
    """A length-prefixed answer, which some servers put behind a second OKAY/FAIL status."""
    head = conn.read_string(4)
    if head in ("OKAY", "FAIL"):
        return conn.read_string_block()  # "Successfully paired to ..." or "Failed: ..."
    return conn.read_string(int(head, 16))


def pair(owner: AdbServerOwner, address: str, code: str, *, timeout: float = 15.0) -> str:
    """`adb pair HOST:PORT CODE` through the server: the answer line ("Successfully paired to ..."),
    or DeviceError with the bilingual pairing instructions."""
    from adbutils.errors import AdbError

    client = owner.ensure()
    try:
        conn = client.make_connection(timeout=timeout)
        try:
            conn.send_command(f"host:pair:{code}:{address}")
            conn.check_okay()
            answer = _status_block(conn)
        finally:
            conn.close()
    except (AdbError, OSError, ValueError) as exc:
        raise DeviceError(STATES["pair_failed"].format(address=address), detail=str(exc)) from exc
    if not answer.startswith("Successfully paired"):
        raise DeviceError(STATES["pair_failed"].format(address=address), detail=answer.strip())
    return answer.strip()


def mdns_services(owner: AdbServerOwner) -> list[tuple[str, str, str]]:
    """Phones advertising wireless debugging on this network, as (instance, service type, HOST:PORT);
    empty when the server has no mDNS (then pair and connect take the address the phone shows)."""
    from adbutils.errors import AdbError

    client = owner.ensure()
    try:
        conn = client.make_connection(timeout=5)
        try:
            conn.send_command("host:mdns:services")
            conn.check_okay()
            text = conn.read_string_block()
        finally:
            conn.close()
    except (AdbError, OSError) as exc:
        log.info("mdns services unavailable: %s", exc)
        return []
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append((parts[0], parts[1], parts[2]))
    return out
