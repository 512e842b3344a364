"""The device side of the ADB protocol over TCP, so the real adb server can `adb connect` to PhoneWorld-lite.

Wire format (what a phone's adbd speaks on its Wi-Fi debugging port): every message is a 24-byte
little-endian header `command, arg0, arg1, data_length, data_check, magic` (magic = command ^ 0xffffffff)
followed by `data_length` bytes. The host opens with CNXN; we answer CNXN with our banner
(`device::ro.product.name=…;…;features=…`), or, when a fault asks for it, with AUTH challenges.
Streams: the host sends OPEN(host_id, 0, "service\\0"); we answer OKAY(our_id, host_id) and run the
service in its own thread; data flows in WRTE packets, each acknowledged by one OKAY before the next WRTE
on that stream; either side ends a stream with CLSE.

What the services do is not this module's business: `Adbd` asks a `ServiceRouter` for a runner per
OPEN. `harness.phoneworld.adbservices` provides the router for the simulated phone.

Faults (for tests): `AdbdFaults` on a running `Adbd` drops connections, goes offline and back through
"authorizing", or refuses authorization, as real phones do.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Protocol

log = logging.getLogger(__name__)

HEADER = struct.Struct("<6I")
A_VERSION = 0x01000001  # the version that no longer checks data checksums
MAX_PAYLOAD = 1024 * 1024
# Back-pressure on what the host writes into a stream: past SOFT bytes unread by the service the OKAY for
# the last WRTE is held back (a well-behaved host waits for it); past HARD bytes (a host that does not
# wait) the stream is closed, so a flood cannot grow the phone's memory without bound.
STREAM_SOFT_LIMIT = 1024 * 1024
STREAM_HARD_LIMIT = 8 * 1024 * 1024
DEFAULT_FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "fixed_push_symlink_timestamp")


class Cmd(IntEnum):
    SYNC = 0x434E5953
    CNXN = 0x4E584E43
    AUTH = 0x48545541
    OPEN = 0x4E45504F
    OKAY = 0x59414B4F
    CLSE = 0x45534C43
    WRTE = 0x45545257
    STLS = 0x534C5453


class AuthType(IntEnum):
    TOKEN = 1
    SIGNATURE = 2
    RSAPUBLICKEY = 3


class ProtocolError(ConnectionError):
    """The peer sent something that is not ADB."""


@dataclass(frozen=True)
class Packet:
    command: int
    arg0: int
    arg1: int
    payload: bytes = b""

    def encode(self, *, checksum: bool = False) -> bytes:
        check = sum(self.payload) & 0xFFFFFFFF if checksum else 0
        header = HEADER.pack(self.command, self.arg0, self.arg1, len(self.payload), check, self.command ^ 0xFFFFFFFF)
        return header + self.payload

    @property
    def name(self) -> str:
        try:
            return Cmd(self.command).name
        except ValueError:
            return hex(self.command)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionResetError("peer closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_packet(sock: socket.socket, max_payload: int = MAX_PAYLOAD) -> Packet:
    """Read one message; raises ConnectionError at EOF or ProtocolError on a bad header."""
    command, arg0, arg1, length, _check, magic = HEADER.unpack(_recv_exactly(sock, HEADER.size))
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic in header {command:#x}")
    if length > max(max_payload, MAX_PAYLOAD):
        raise ProtocolError(f"payload of {length} bytes exceeds the maximum")
    payload = _recv_exactly(sock, length) if length else b""
    return Packet(command, arg0, arg1, payload)


@dataclass(frozen=True)
class DeviceProps:
    """What the CNXN banner tells the host: product name, model, device and features."""

    product: str = "phoneworld"
    model: str = "PhoneWorld_Lite"
    device: str = "phoneworld"
    features: tuple[str, ...] = DEFAULT_FEATURES

    def banner(self) -> bytes:
        return (
            f"device::ro.product.name={self.product};ro.product.model={self.model};"
            f"ro.product.device={self.device};features={','.join(self.features)}"
        ).encode()


class StreamClosed(ConnectionError):
    """The stream ended (the host closed it or the connection dropped)."""


class AdbStream:
    """One open service stream, seen from the device: read what the host writes, write back to it.

    `write` blocks until the host acknowledged each chunk (ADB's one-WRTE-in-flight rule) and raises
    StreamClosed once the stream is gone. `read` returns b"" at end of stream.
    """

    def __init__(self, transport: _Transport, local_id: int, remote_id: int, service: str):
        self._transport = transport
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self._incoming: queue.Queue[bytes | None] = queue.Queue()
        self._pending = b""
        self._acked = threading.Event()
        self._acked.set()
        self._closed = threading.Event()
        self._sent_close = False
        self._write_lock = threading.Lock()
        self._buffer_lock = threading.Lock()
        self._buffered = 0  # bytes the host wrote that the service has not read yet
        self._owed_okay = False  # an OKAY held back until the service reads

    @property
    def buffered(self) -> int:
        return self._buffered

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def wait_closed(self, timeout: float | None = None) -> bool:
        return self._closed.wait(timeout)

    def write(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            step = self._transport.max_payload
            for start in range(0, len(view), step):
                while not self._acked.wait(0.5):
                    if self.closed:
                        raise StreamClosed(self.service)
                if self.closed:
                    raise StreamClosed(self.service)
                self._acked.clear()
                self._transport.send(Packet(Cmd.WRTE, self.local_id, self.remote_id, bytes(view[start : start + step])))

    def read(self, timeout: float | None = None) -> bytes:
        """The next chunk the host wrote (any size), b"" at end of stream; queue.Empty on timeout."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        item = self._incoming.get(timeout=timeout)
        if item is None:
            self._incoming.put(None)  # keep EOF sticky
            return b""
        with self._buffer_lock:
            self._buffered -= len(item)
            release = self._owed_okay and self._buffered <= STREAM_SOFT_LIMIT
            if release:
                self._owed_okay = False
        if release and not self.closed:
            self._transport.send_quietly(Packet(Cmd.OKAY, self.local_id, self.remote_id))
        return item

    def read_exactly(self, n: int, timeout: float | None = None) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.read(timeout)
            if not chunk:
                raise StreamClosed(f"{self.service}: end of stream after {len(buf)} of {n} bytes")
            buf += chunk
        self._pending = bytes(buf[n:]) + self._pending
        return bytes(buf[:n])

    def close(self) -> None:
        """End the stream from our side (sends CLSE once)."""
        if not self._sent_close:
            self._sent_close = True
            if not self.closed:
                self._transport.send_quietly(Packet(Cmd.CLSE, self.local_id, self.remote_id))
        self._mark_closed()

    # --- called by the transport's reader thread -------------------------------------------------------
    def _on_data(self, data: bytes) -> bool:
        """Queue what the host wrote; True when its OKAY may go now (False: held back, or the stream was
        closed for a flood)."""
        with self._buffer_lock:
            if self._buffered + len(data) > STREAM_HARD_LIMIT:
                flood = True
            else:
                flood = False
                self._buffered += len(data)
                self._incoming.put(data)
                if self._buffered > STREAM_SOFT_LIMIT:
                    self._owed_okay = True
                    return False
        if flood:
            log.warning("adbd: %s: the host wrote more than %d bytes without waiting; closing the stream",
                        self.service, STREAM_HARD_LIMIT)
            self.close()
            return False
        return True

    def _on_okay(self) -> None:
        self._acked.set()

    def _mark_closed(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._incoming.put(None)
            self._acked.set()


StreamRunner = Callable[[AdbStream], None]


class ServiceRouter(Protocol):
    """Maps a service name from OPEN (`shell,v2,raw:ls`, `sync:`, `localabstract:scrcpy`) to a runner.

    Return None to refuse the OPEN (the host sees the stream close at once). The runner owns the stream
    until it returns; the transport closes it afterwards.
    """

    def route(self, service: str) -> StreamRunner | None: ...


class AuthMode(StrEnum):
    ACCEPT = "accept"  # no auth, CNXN at once (like a phone with `ro.adb.secure=0`)
    REFUSE = "refuse"  # challenge forever: the host ends up "unauthorized"
    DELAY = "delay"  # challenge, then accept after `authorize_delay_s` ("authorizing" meanwhile)


@dataclass
class AdbdFaults:
    """Switches a test flips on a running Adbd. Read by the transports on every new connection."""

    auth: AuthMode = AuthMode.ACCEPT
    authorize_delay_s: float = 1.0
    offline_until: float = 0.0  # monotonic time before which new connections get no answer
    delay_once: bool = False  # after one DELAY authorization, go back to ACCEPT
    accepted_keys: list[bytes] = field(default_factory=list)  # public keys the host offered us (for tests)
    frozen: bool = False  # the phone stops answering: OPENs get no reply, while the link stays up


class _Transport:
    """One TCP connection from the adb server: handshake, then a reader loop dispatching stream packets."""

    def __init__(self, sock: socket.socket, adbd: Adbd):
        self.sock = sock
        self.adbd = adbd
        self.max_payload = 4096
        self.peer_version = 0
        self.online = False
        self._send_lock = threading.Lock()
        self._streams: dict[int, AdbStream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self._closed = False
        self._auth_timer: threading.Timer | None = None

    # --- sending -----------------------------------------------------------------------------------------
    def send(self, packet: Packet) -> None:
        data = packet.encode(checksum=self.peer_version < A_VERSION)
        with self._send_lock:
            if self._closed:
                raise StreamClosed("connection closed")
            try:
                self.sock.sendall(data)
            except OSError as exc:
                raise StreamClosed(str(exc)) from exc

    def send_quietly(self, packet: Packet) -> None:
        try:
            self.send(packet)
        except StreamClosed:
            pass

    # --- the loop ----------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            while True:
                packet = read_packet(self.sock)
                self._handle(packet)
        except (ConnectionError, OSError) as exc:
            log.debug("adbd: connection ended: %s", exc)
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        with self._send_lock:
            if self._closed:
                return
            self._closed = True
        if self._auth_timer is not None:
            self._auth_timer.cancel()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream._mark_closed()
        self.adbd._forget(self)

    def _send_cnxn(self) -> None:
        if self.adbd.faults.auth is AuthMode.DELAY and self.adbd.faults.delay_once:
            self.adbd.faults.auth = AuthMode.ACCEPT  # the flap is over: later connections go straight in
        self.online = True
        self.send_quietly(Packet(Cmd.CNXN, A_VERSION, MAX_PAYLOAD, self.adbd.props.banner()))

    def _answer_cnxn(self) -> None:
        self._auth_timer = None
        if self.adbd.faults.auth is AuthMode.ACCEPT:
            self._send_cnxn()
        else:
            self._challenge()

    def _challenge(self) -> None:
        self.send_quietly(Packet(Cmd.AUTH, AuthType.TOKEN, 0, os.urandom(20)))

    def _handle(self, p: Packet) -> None:
        faults = self.adbd.faults
        if p.command == Cmd.CNXN:
            self.peer_version = p.arg0
            self.max_payload = max(256, min(p.arg1, MAX_PAYLOAD))
            log.debug("adbd: CNXN from host %r", p.payload[:80])
            wait = faults.offline_until - time.monotonic()
            if wait > 0:
                # Stay silent for a while (the host shows "offline"), then carry on with the handshake.
                self._auth_timer = threading.Timer(wait, self._answer_cnxn)
                self._auth_timer.daemon = True
                self._auth_timer.start()
                return
            self._answer_cnxn()
        elif p.command == Cmd.AUTH:
            if p.arg0 == AuthType.SIGNATURE:
                if faults.auth is AuthMode.DELAY and self._auth_timer is None:
                    self._auth_timer = threading.Timer(faults.authorize_delay_s, self._send_cnxn)
                    self._auth_timer.daemon = True
                    self._auth_timer.start()
                elif faults.auth is AuthMode.REFUSE:
                    self._challenge()  # "wrong key": the host tries its next key, then sends its public key
                elif faults.auth is AuthMode.ACCEPT:
                    self._send_cnxn()
            elif p.arg0 == AuthType.RSAPUBLICKEY:
                faults.accepted_keys.append(p.payload)
                if faults.auth is AuthMode.DELAY and self._auth_timer is None:
                    self._auth_timer = threading.Timer(faults.authorize_delay_s, self._send_cnxn)
                    self._auth_timer.daemon = True
                    self._auth_timer.start()
                # REFUSE: the user never taps "Allow"; the host stays unauthorized.
        elif p.command == Cmd.OPEN:
            if self.adbd.faults.frozen:
                return  # a hung phone: the adb server still lists it, but no service ever answers
            self._open(p)
        elif p.command == Cmd.WRTE:
            stream = self._stream(p.arg1)
            if stream is None:
                self.send_quietly(Packet(Cmd.CLSE, 0, p.arg0))
                return
            if stream._on_data(p.payload):
                self.send_quietly(Packet(Cmd.OKAY, stream.local_id, stream.remote_id))
        elif p.command == Cmd.OKAY:
            stream = self._stream(p.arg1)
            if stream is not None:
                stream.remote_id = p.arg0
                stream._on_okay()
        elif p.command == Cmd.CLSE:
            with self._streams_lock:
                stream = self._streams.pop(p.arg1, None)
            if stream is not None:
                # A real adbd answers: handle_packet(A_CLSE) closes the local socket, and
                # local_socket_close() shuts its remote peer down, which sends CLSE(local, remote) back
                # (AOSP packages/modules/adb: adb.cpp, sockets.cpp remote_socket_shutdown). Clients
                # such as adb-shell wait for that CLSE before reusing the connection.
                stream._sent_close = True
                self.send_quietly(Packet(Cmd.CLSE, stream.local_id, stream.remote_id))
                stream._mark_closed()
            # An unknown stream id is ignored, as find_local_socket() failing is in adbd.
        elif p.command == Cmd.STLS:
            log.warning("adbd: host asked for TLS, which the simulated phone does not speak")
        else:
            log.debug("adbd: ignoring %s", p.name)

    def _stream(self, local_id: int) -> AdbStream | None:
        with self._streams_lock:
            return self._streams.get(local_id)

    def _open(self, p: Packet) -> None:
        service = p.payload.rstrip(b"\0").decode("utf-8", "replace")
        if not self.online:
            self.send_quietly(Packet(Cmd.CLSE, 0, p.arg0))
            return
        runner = self.adbd.router.route(service)
        if runner is None:
            log.debug("adbd: refusing service %r", service)
            self.send_quietly(Packet(Cmd.CLSE, 0, p.arg0))
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = AdbStream(self, local_id, p.arg0, service)
            self._streams[local_id] = stream
        self.send_quietly(Packet(Cmd.OKAY, local_id, p.arg0))
        threading.Thread(target=self._serve, args=(runner, stream), name=f"adbd-{service[:20]}", daemon=True).start()

    def _serve(self, runner: StreamRunner, stream: AdbStream) -> None:
        try:
            runner(stream)
        except StreamClosed:
            log.debug("adbd: %s: host went away", stream.service)
        except Exception:  # a service bug must not take the phone down; log it loudly
            log.exception("adbd: service %r failed", stream.service)
        finally:
            # Let the last WRTE be acknowledged before CLSE, as adbd does.
            stream._acked.wait(2.0)
            stream.close()
            with self._streams_lock:
                self._streams.pop(stream.local_id, None)


class Adbd:
    """A listening simulated adbd on 127.0.0.1:port (0 picks a free port; see `.port` after start()).

    `faults` can be changed at any time; `drop_connections()` cuts every host connection (what the host
    sees when Wi-Fi drops or the phone dies); `stop()` also stops listening (a killed phone).
    """

    def __init__(self, router: ServiceRouter, *, port: int = 0, host: str = "127.0.0.1", props: DeviceProps | None = None):
        self.router = router
        self.props = props or DeviceProps()
        self.faults = AdbdFaults()
        self._bind = (host, port)
        self._listener: socket.socket | None = None
        self._transports: set[_Transport] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("Adbd is not started")
        return self._listener.getsockname()[1]

    @property
    def address(self) -> str:
        return f"{self._bind[0]}:{self.port}"

    def start(self) -> Adbd:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(self._bind)
        listener.listen(16)
        self._listener = listener
        self._bind = (self._bind[0], listener.getsockname()[1])
        self._stopping.clear()
        self._thread = threading.Thread(target=self._accept_loop, args=(listener,), name="adbd-accept", daemon=True)
        self._thread.start()
        log.info("adbd listening on %s", self.address)
        return self

    def _accept_loop(self, listener: socket.socket) -> None:
        pause = 0.01
        while not self._stopping.is_set():
            try:
                sock, _ = listener.accept()
            except OSError as exc:
                if self._stopping.is_set() or listener.fileno() < 0 or exc.errno in (errno.EBADF, errno.EINVAL):
                    break  # the listener was closed: stop() or restart()
                # Transient (out of file descriptors, a connection reset before accept): wait, keep accepting.
                log.warning("adbd: accept failed (%s); retrying in %.2f s", exc, pause)
                self._stopping.wait(pause)
                pause = min(1.0, pause * 2)
                continue
            pause = 0.01
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                sock.close()
                continue
            transport = _Transport(sock, self)
            with self._lock:
                self._transports.add(transport)
            threading.Thread(target=transport.run, name="adbd-transport", daemon=True).start()

    def _forget(self, transport: _Transport) -> None:
        with self._lock:
            self._transports.discard(transport)

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._transports)

    def online_count(self) -> int:
        with self._lock:
            return sum(1 for t in self._transports if t.online)

    def drop_connections(self) -> None:
        """Cut every host connection at once (the host sees the device vanish)."""
        with self._lock:
            transports = list(self._transports)
        for transport in transports:
            transport.shutdown()

    def go_offline(self, offline_s: float, authorizing_s: float) -> None:
        """Drop, stay silent for `offline_s` (host: offline), then challenge and accept after `authorizing_s`
        (host: authorizing), then be a device again; all without restarting anything."""
        self.faults.offline_until = time.monotonic() + offline_s
        self.faults.auth = AuthMode.DELAY
        self.faults.authorize_delay_s = authorizing_s
        self.faults.delay_once = True
        self.drop_connections()

    def stop(self) -> None:
        """Stop listening and drop everything (a phone that died)."""
        self._stopping.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
        self.drop_connections()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def restart(self) -> None:
        """Listen again on the same port after stop() (the phone came back)."""
        self.start()

    def __enter__(self) -> Adbd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
