"""The scrcpy server side (protocol of scrcpy 3.3.4, the server muti-scrcpy-client 0.9.0 ships), for the
simulated phone. It runs when a client starts
`CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server 3.3.4 key=value...`.

Sockets (tunnel_forward=true): the server listens on `localabstract:scrcpy` (`scrcpy_%08x` with `scid`).
The first connection is the video socket: one dummy byte 0x00 (send_dummy_byte), then, once the
control socket (the second connection) is there, 64 bytes of device name (send_device_meta), 12 bytes
`>4sII` codec id b"h264", width, height (send_codec_meta), then raw Annex-B H.264 (send_frame_meta=false;
with it, each packet gets a 12-byte `>QI` pts/flags + size header).

Video: frames come from the World whenever its screen changes (black for a FLAG_SECURE window, as a real
phone shows), at most `max_fps`, encoded by PyAV's libx264 (ultrafast, zerolatency, no B-frames). An
access-unit delimiter follows each frame so a client's parser can hand the frame to its decoder at once
instead of waiting for the next one. A static screen is re-sent every `repeat_ms` from a cached YUV frame,
so a client always gets a frame newer than its last action soon. The real server repeats after 100 ms;
the simulator defaults to 250 ms to spare a shared CPU (pass repeat_ms=100 for the real rhythm).

Control (client -> phone, big-endian): 0 key (action u8, keycode i32, repeat i32, meta i32), 1 text
(i32 length + UTF-8; like Android's key map, characters outside ASCII cannot be injected this way),
2 touch (action u8, pointer i64, x i32, y i32, w u16, h u16, pressure u16, action_button i32, buttons i32),
3 scroll (x, y i32, w, h u16, h/v i16 fixed point, buttons i32), 4 back-or-screen-on (action u8),
5/6/7 panels, 8 get clipboard (copy_key u8), 9 set clipboard (sequence u64, paste u8, i32 length + text),
10 display power (u8), 11 rotate, 12-14 UHID, 15 keyboard settings, 16 start app (u8 length + name),
17 reset video. Phone -> client: 0 clipboard (i32 length + text), 1 clipboard ack (sequence u64).
A tap is a DOWN and UP close together; a held touch is a long press; a moving one a swipe.
"""

from __future__ import annotations

import logging
import math
import queue
import struct
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from assistant_core.hittest import LONG_PRESS_TIMEOUT_MS, TOUCH_SLOP_PX
from harness.phoneworld.adbd import AdbStream, StreamClosed
from harness.phoneworld.adbservices import ShellIO

if TYPE_CHECKING:
    from harness.phoneworld.host import PhoneHost

log = logging.getLogger(__name__)

SERVER_VERSION = "3.3.4"
AUD = b"\x00\x00\x00\x01\x09\xf0"
ACTION_DOWN, ACTION_UP, ACTION_MOVE = 0, 1, 2
TAP_SLOP_PX = TOUCH_SLOP_PX  # the same numbers as World.swipe and the gate (assistant_core.hittest)
LONG_PRESS_S = LONG_PRESS_TIMEOUT_MS / 1000


@dataclass
class _Touch:
    x: int
    y: int
    t: float
    last_x: int
    last_y: int


def _bool(options: dict[str, str], key: str, default: bool) -> bool:
    value = options.get(key)
    return default if value is None else value.lower() == "true"


class ScrcpyServer:
    """One run of the server on a SimPhone; `run(io)` blocks until the client leaves or drop_clients()."""

    def __init__(self, phone: PhoneHost, *, version: str, options: dict[str, str]):
        self.phone = phone
        self.version = version
        self.options = options
        self.max_size = int(options.get("max_size", "0") or 0)
        self.max_fps = float(options.get("max_fps", "0") or 0) or 30.0
        self.bit_rate = int(options.get("video_bit_rate", options.get("bit_rate", "8000000")) or 8000000)
        self.repeat_s = int(options.get("repeat_ms", "250")) / 1000
        self.control_enabled = _bool(options, "control", True)
        self.video_enabled = _bool(options, "video", True)
        self.frame_meta = _bool(options, "send_frame_meta", True)
        self.scid = options.get("scid")
        self._incoming: queue.Queue[AdbStream] = queue.Queue()
        self._stop = threading.Event()
        self._streams: list[AdbStream] = []
        self._touch: dict[int, _Touch] = {}
        self.frames_sent = 0
        self.controls_received = 0
        w, h = phone.world.width, phone.world.height
        if self.max_size and max(w, h) > self.max_size:
            scale = self.max_size / max(w, h)
            w, h = int(w * scale) & ~7, int(h * scale) & ~7
        self.video_size = (w, h)

    @property
    def socket_name(self) -> str:
        return "scrcpy" if not self.scid else f"scrcpy_{int(self.scid, 16):08x}"

    # --- lifecycle ------------------------------------------------------------------------------------
    def _accept(self, stream: AdbStream) -> None:
        """Runner for localabstract: hand the socket over and keep it open while the server runs."""
        self._incoming.put(stream)
        while not stream.closed and not self._stop.is_set():
            stream.wait_closed(0.2)

    def _next_stream(self, io: ShellIO, timeout: float = 10.0) -> AdbStream | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not io.cancelled() and not self._stop.is_set():
            try:
                return self._incoming.get(timeout=0.1)
            except queue.Empty:
                continue
        return None

    def stop(self) -> None:
        self._stop.set()

    def drop_clients(self) -> None:
        """Close every socket at once, as when the server process dies."""
        for stream in list(self._streams):
            stream.close()
        self._stop.set()

    def run(self, io: ShellIO) -> int:
        if self.version != SERVER_VERSION:
            io.out(f"[server] ERROR: The server version ({SERVER_VERSION}) does not match the client ({self.version})\n")
            return 1
        phone = self.phone
        props = phone.adbd.props
        io.out(f"[server] INFO: Device: [PhoneWorld] phoneworld {props.model} (Android 14)\n")
        unlisten = phone.services.listen_abstract(self.socket_name, self._accept)
        phone.scrcpy_servers.append(self)
        try:
            video = self._next_stream(io) if self.video_enabled else None
            if self.video_enabled and video is None:
                io.out("[server] ERROR: no client connected\n")
                return 1
            if video is not None:
                self._streams.append(video)
                if _bool(self.options, "send_dummy_byte", True):
                    video.write(b"\x00")
            control = None
            if self.control_enabled:
                control = self._next_stream(io)
                if control is None:
                    return 1
                self._streams.append(control)
            unlisten()
            first = video or control
            if first is not None and _bool(self.options, "send_device_meta", True):
                first.write(props.model.encode()[:63].ljust(64, b"\x00"))
            if control is not None:
                threading.Thread(target=self._control_loop, args=(control,), name="scrcpy-control", daemon=True).start()
            if video is not None:
                if _bool(self.options, "send_codec_meta", True):
                    video.write(struct.pack(">4sII", b"h264", *self.video_size))
                self._video_loop(video, io)
            else:
                while not io.cancelled() and not self._stop.is_set() and not (control and control.closed):
                    time.sleep(0.1)
            return 0
        except StreamClosed:
            log.info("scrcpy server: client went away")
            return 0
        finally:
            unlisten()
            self._stop.set()
            for stream in self._streams:
                stream.close()
            if self in phone.scrcpy_servers:
                phone.scrcpy_servers.remove(self)

    # --- video ------------------------------------------------------------------------------------------
    def _encoder(self):
        import av

        codec = av.CodecContext.create("libx264", "w")
        codec.width, codec.height = self.video_size
        codec.pix_fmt = "yuv420p"
        codec.time_base = Fraction(1, 1_000_000)
        codec.framerate = Fraction(int(self.max_fps))  # x264's rate control budgets bits per frame from this
        codec.bit_rate = self.bit_rate
        codec.gop_size = 600
        codec.options = {"preset": "ultrafast", "tune": "zerolatency", "bframes": "0"}
        return codec

    def _frame_array(self) -> tuple[int, np.ndarray | None]:
        phone = self.phone
        with phone.lock:
            version = phone.world.version
            secure = phone.faults.secure.value
            image = phone.capture_image()
        key = hash((version, secure))
        if image.size != self.video_size:
            image = image.resize(self.video_size)
        return key, np.asarray(image.convert("RGB"))

    def _video_loop(self, video: AdbStream, io: ShellIO) -> None:
        import av

        codec = self._encoder()
        start = time.monotonic()
        last_key: int | None = None
        last_array: np.ndarray | None = None
        last_sent = 0.0
        yuv = None
        interval = 1.0 / self.max_fps
        while not io.cancelled() and not self._stop.is_set() and not video.closed:
            with self.phone.lock:
                key = hash((self.phone.world.version, self.phone.faults.secure.value, self.phone.world.screen_on))
            now = time.monotonic()
            due = now - last_sent >= self.repeat_s
            if key != last_key:
                key, array = self._frame_array()
                last_key = key
                if last_array is None or not np.array_equal(array, last_array):
                    yuv = av.VideoFrame.from_ndarray(array, format="rgb24").reformat(format="yuv420p")
                    last_array = array
                    due = True
            if not due or yuv is None:
                time.sleep(min(interval, 0.01))
                continue
            pts = int((now - start) * 1_000_000)
            yuv.pts = pts
            for packet in codec.encode(yuv):
                self._send_packet(video, bytes(packet), pts, bool(packet.is_keyframe))
            last_sent = now
            self.frames_sent += 1
            spare = interval - (time.monotonic() - now)
            if spare > 0:
                time.sleep(spare)

    def _send_packet(self, video: AdbStream, data: bytes, pts: int, key: bool) -> None:
        payload = data + AUD
        if self.frame_meta:
            flags = (1 << 62) if key else 0
            video.write(struct.pack(">QI", pts | flags, len(payload)) + payload)
        else:
            video.write(payload)

    # --- control ----------------------------------------------------------------------------------------
    def _control_loop(self, control: AdbStream) -> None:
        try:
            while not self._stop.is_set():
                kind = control.read_exactly(1)[0]
                self.controls_received += 1
                self._control(kind, control)
        except StreamClosed:
            log.debug("scrcpy control: closed")
        except (ValueError, struct.error) as exc:
            log.warning("scrcpy control: bad message (%s); closing", exc)
            control.close()

    def _to_world(self, x: int, y: int, w: int, h: int) -> tuple[int, int]:
        world = self.phone.world
        sx = world.width / w if w else 1.0
        sy = world.height / h if h else 1.0
        return (min(world.width - 1, max(0, int(x * sx))), min(world.height - 1, max(0, int(y * sy))))

    def _control(self, kind: int, s: AdbStream) -> None:
        phone = self.phone
        world = phone.world
        if kind == 0:
            action, keycode, _repeat, _meta = struct.unpack(">BiiI", s.read_exactly(13))
            if action == ACTION_DOWN:
                with phone.lock:
                    world.key(keycode)
        elif kind == 1:
            (length,) = struct.unpack(">i", s.read_exactly(4))
            text = s.read_exactly(length).decode("utf-8", "replace")
            typable = "".join(c for c in text if 32 <= ord(c) < 127)
            if typable != text:
                log.info("scrcpy text: %d characters cannot be injected as key events", len(text) - len(typable))
            if typable:
                with phone.lock:
                    world.input_text(typable)
        elif kind == 2:
            action, pointer, x, y, w, h, _pressure, _ab, _buttons = struct.unpack(">BqiiHHHii", s.read_exactly(31))
            self._touch_event(action, pointer, *self._to_world(x, y, w, h))
        elif kind == 3:
            x, y, w, h, hs, vs, _buttons = struct.unpack(">iiHHhhi", s.read_exactly(20))
            wx, wy = self._to_world(x, y, w, h)
            dy = int(vs / 32768 * 16 * 300)
            dx = int(hs / 32768 * 16 * 300)
            with phone.lock:
                x2 = min(world.width - 1, max(0, wx + dx))
                y2 = min(world.height - 1, max(0, wy + dy))
                if (x2, y2) != (wx, wy):
                    world.swipe(wx, wy, x2, y2, duration_ms=300)
        elif kind == 4:
            (action,) = struct.unpack(">B", s.read_exactly(1))
            if action == ACTION_DOWN:
                with phone.lock:
                    world.key(224 if not world.screen_on else 4)
        elif kind in (5, 6):
            with phone.lock:
                world.key(83)
        elif kind == 7:
            with phone.lock:
                if getattr(world.sys, "shade_open", False):
                    world.key(4)
        elif kind == 8:
            s.read_exactly(1)  # copy_key
            with phone.lock:
                text = world.clipboard or ""
            data = text.encode()
            s.write(b"\x00" + struct.pack(">i", len(data)) + data)
        elif kind == 9:
            sequence, paste, length = struct.unpack(">Q?i", s.read_exactly(13))
            text = s.read_exactly(length).decode("utf-8", "replace")
            with phone.lock:
                world.clipboard = text
                if paste:
                    world.input_text(text)
            if sequence:
                s.write(b"\x01" + struct.pack(">Q", sequence))
        elif kind == 10:
            s.read_exactly(1)
        elif kind in (11, 15, 17):
            pass
        elif kind == 12:
            _id, _vendor, _product = struct.unpack(">HHH", s.read_exactly(6))
            (name_len,) = struct.unpack(">B", s.read_exactly(1))
            s.read_exactly(name_len)
            (desc_len,) = struct.unpack(">H", s.read_exactly(2))
            s.read_exactly(desc_len)
        elif kind == 13:
            _id, size = struct.unpack(">HH", s.read_exactly(4))
            s.read_exactly(size)
        elif kind == 14:
            s.read_exactly(2)
        elif kind == 16:
            (name_len,) = struct.unpack(">B", s.read_exactly(1))
            name = s.read_exactly(name_len).decode("utf-8", "replace")
            self._start_app(name)
        else:
            raise ValueError(f"unknown control message type {kind}")

    def _start_app(self, name: str) -> None:
        force = name.startswith("+")
        name = name.lstrip("+")
        by_label = name.startswith("?")
        name = name.lstrip("?")
        world = self.phone.world
        with self.phone.lock:
            package = name
            if by_label:
                found = world.find_app(name)
                package = found.package if found is not None else ""
            if package:
                if force:
                    world.force_stop(package)
                world.launch(package)

    def _touch_event(self, action: int, pointer: int, x: int, y: int) -> None:
        now = time.monotonic()
        if action == ACTION_DOWN:
            self._touch[pointer] = _Touch(x, y, now, x, y)
            return
        touch = self._touch.get(pointer)
        if touch is None:
            return
        if action == ACTION_MOVE:
            touch.last_x, touch.last_y = x, y
            return
        if action != ACTION_UP:
            return
        del self._touch[pointer]
        held = now - touch.t
        moved = math.hypot(x - touch.x, y - touch.y)
        world = self.phone.world
        with self.phone.lock:
            if moved <= TAP_SLOP_PX:
                if held >= LONG_PRESS_S:
                    world.long_press(touch.x, touch.y, duration_ms=int(held * 1000))
                else:
                    world.tap(touch.x, touch.y)
            else:
                world.swipe(touch.x, touch.y, x, y, duration_ms=max(50, int(held * 1000)))
