"""The simulated adbd under a hostile or unlucky host (issue 20): one failed accept() (file descriptors
run out) used to stop it accepting for good; a host that floods WRTE without waiting for OKAY grew its
memory without bound (62 -> 404 MB). Now it keeps accepting, holds OKAYs back and closes a flooding stream."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from harness.phoneworld.adbd import (
    A_VERSION,
    MAX_PAYLOAD,
    STREAM_HARD_LIMIT,
    Adbd,
    Cmd,
    Packet,
    read_packet,
)

ROOT = Path(__file__).resolve().parents[1]


class SinkRouter:
    """`sink:` opens a stream whose service never reads (a stuck shell command); nothing else exists."""

    def __init__(self):
        self.streams = []

    def route(self, service):
        if service != "sink:":
            return None

        def run(stream):
            self.streams.append(stream)
            stream.wait_closed(30)

        return run


def handshake(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(Packet(Cmd.CNXN, A_VERSION, MAX_PAYLOAD, b"host::\0").encode())
    answer = read_packet(sock)
    assert answer.command == Cmd.CNXN
    return sock


def test_a_host_flooding_wrte_is_held_back_and_its_stream_closed():
    router = SinkRouter()
    with Adbd(router) as adbd:
        sock = handshake(adbd.port)
        sock.sendall(Packet(Cmd.OPEN, 7, 0, b"sink:\0").encode())
        opened = read_packet(sock)
        assert opened.command == Cmd.OKAY
        local = opened.arg0
        chunk = b"x" * MAX_PAYLOAD
        count = 3 * STREAM_HARD_LIMIT // MAX_PAYLOAD

        def flood():
            try:
                for _ in range(count):
                    sock.sendall(Packet(Cmd.WRTE, 7, local, chunk).encode())
            except OSError:
                pass

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        okays, closed = 0, False
        while not closed:
            packet = read_packet(sock)  # a 10 s socket timeout: a missing CLSE fails the test
            okays += packet.command == Cmd.OKAY
            closed = packet.command == Cmd.CLSE
        writer.join(30)
        assert closed and okays < count  # OKAYs were held back, and the flood ended the stream
        assert all(s.buffered <= STREAM_HARD_LIMIT for s in router.streams)
        sock.close()


def test_a_well_behaved_host_waits_for_the_service_to_read():
    class Reader(SinkRouter):
        def route(self, service):
            def run(stream):
                self.streams.append(stream)
                stream.read_exactly(3 * MAX_PAYLOAD, timeout=10)
                stream.write(b"got it")

            return run if service == "read:" else None

    with Adbd(Reader()) as adbd:
        sock = handshake(adbd.port)
        sock.sendall(Packet(Cmd.OPEN, 7, 0, b"read:\0").encode())
        local = read_packet(sock).arg0
        got = b""
        for _ in range(3):  # one WRTE in flight, as adb does: the next only after the OKAY
            sock.sendall(Packet(Cmd.WRTE, 7, local, b"y" * MAX_PAYLOAD).encode())
            while True:
                packet = read_packet(sock)
                if packet.command == Cmd.WRTE:
                    got += packet.payload
                    sock.sendall(Packet(Cmd.OKAY, 7, local).encode())
                    continue
                assert packet.command == Cmd.OKAY
                break
        while b"got it" not in got:
            packet = read_packet(sock)
            if packet.command == Cmd.WRTE:
                got += packet.payload
                sock.sendall(Packet(Cmd.OKAY, 7, local).encode())
        sock.close()


CHILD = textwrap.dedent("""
    import os, resource, sys, time
    from harness.phoneworld.adbd import Adbd

    class Router:
        def route(self, service):
            return None

    adbd = Adbd(Router()).start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 6, hard))
    print(adbd.port, flush=True)
    time.sleep(60)
""")


def test_adbd_keeps_accepting_after_running_out_of_file_descriptors():
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(14)]
        # More connections than the phone has descriptors for: accept() fails with EMFILE meanwhile.
        threading.Event().wait(1.0)
        for sock in idle:
            sock.close()
        sock = None
        for _ in range(50):  # the idle ones drain as their transports see EOF and free descriptors
            try:
                sock = handshake(port)
                break
            except (OSError, AssertionError):
                threading.Event().wait(0.2)
        assert sock is not None, "adbd stopped accepting after a failed accept()"
        sock.close()
    finally:
        child.kill()
        child.wait(10)
