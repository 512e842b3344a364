"""Reading what the phone prints about its screen: the UI tree (`uiautomator dump`), the screen state
(`dumpsys window` / `dumpsys power`), and the screenshot (raw `screencap` or PNG), each checked for
completeness. Pure functions over text and bytes, no I/O: split out of `harness.adb` (issue 26) so that
`harness.tools` reads a UI dump without importing the device (which carries tools out: that was an import
cycle). `harness.adb` re-exports every name here.
"""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from typing import Any

from assistant_core.types import UIElement

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_FOCUS_RE = re.compile(r"mCurrentFocus=Window\{(?P<hash>\S+) \S+ (?P<name>[^}\s]+)\}")
_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")

@dataclass(frozen=True)
class ScreenState:
    foreground: str
    activity: str
    secure: bool
    locked: bool
    screen_on: bool



def _bool_attr(node: ET.Element, name: str, default: bool = False) -> bool:
    value = node.get(name)
    return default if value is None else value == "true"


def parse_ui_xml(xml: str) -> tuple[UIElement, ...]:
    """uiautomator's XML -> UIElements, every node in document order. A `dump --windows` document
    (Android 11+: <displays><display><window>..., topmost window first) is read bottom window first, so
    a later element lies above an earlier one as in a single-window dump; phones without --windows
    ignore the option and write the active window alone."""
    root = ET.fromstring(xml)
    out = []
    if root.tag == "displays":
        windows = [w for display in root.findall("display") for w in display.findall("window")]
        nodes = [n for w in reversed(windows) for n in _nodes_with_depth(w)]
    else:
        nodes = list(_nodes_with_depth(root))
    for node, depth in nodes:
        m = _BOUNDS_RE.fullmatch(node.get("bounds", ""))
        bounds = tuple(int(v) for v in m.groups()) if m else (0, 0, 0, 0)
        out.append(
            UIElement(
                bounds=bounds,  # type: ignore[arg-type]
                text=node.get("text", ""),
                content_desc=node.get("content-desc", ""),
                resource_id=node.get("resource-id", ""),
                class_name=node.get("class", "android.view.View"),
                package=node.get("package", ""),
                clickable=_bool_attr(node, "clickable"),
                long_clickable=_bool_attr(node, "long-clickable"),
                checkable=_bool_attr(node, "checkable"),
                checked=_bool_attr(node, "checked"),
                focusable=_bool_attr(node, "focusable"),
                focused=_bool_attr(node, "focused"),
                enabled=_bool_attr(node, "enabled", True),
                selected=_bool_attr(node, "selected"),
                scrollable=_bool_attr(node, "scrollable"),
                password=_bool_attr(node, "password"),
                index=int(node.get("index", "0") or 0),
                # PhoneWorld-lite marks its dialog panels, keyboard and shade (real dumps hold one window).
                blocks_touch=_bool_attr(node, "blocks-touch"),
                depth=depth,
            )
        )
    return tuple(out)


def _nodes_with_depth(parent: ET.Element, depth: int = 0):
    """The <node> elements under `parent` in document order, each with its nesting depth (0 for the top)."""
    for child in parent:
        if child.tag == "node":
            yield child, depth
            yield from _nodes_with_depth(child, depth + 1)
        else:
            yield from _nodes_with_depth(child, depth)


def parse_screen_state(window: str, power: str) -> ScreenState:
    """Foreground, FLAG_SECURE on the focused window, keyguard and screen power from dumpsys output."""
    focus = _FOCUS_RE.search(window)
    package = activity = ""
    secure = False
    if focus:
        name = focus.group("name")
        package, _, activity = name.partition("/")
        # The focused window's own block: from its "Window #N Window{hash ...}:" header to the next one.
        header = re.search(r"Window #\d+ Window\{" + re.escape(focus.group("hash")) + r"[^\n]*", window)
        if header:
            rest = window[header.end() :]
            nxt = re.search(r"\n\s*Window #\d+ ", rest)
            block = rest[: nxt.start()] if nxt else rest.split("\n\n", 1)[0]
            secure = bool(re.search(r"\bfl=[^\n]*\bSECURE\b", block))
    locked = any(
        f"{key}=true" in window for key in ("mShowingLockscreen", "mDreamingLockscreen", "mKeyguardShowing", "isStatusBarKeyguard")
    ) or package == "NotificationShade"
    screen_on = not ("mWakefulness=Asleep" in power or "Display Power: state=OFF" in power)
    if package == "NotificationShade":
        package = "com.android.systemui"
    return ScreenState(package, activity, secure, locked, screen_on)


def validate_png(data: bytes) -> tuple[int, int]:
    """(width, height) of a complete PNG; ValueError when it is not one (truncated, text, empty)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError(f"not a PNG ({data[:40]!r})")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise ValueError("PNG without a header")
    width, height = struct.unpack(">II", data[16:24])
    if not data.rstrip(b"\x00").endswith(b"IEND\xaeB`\x82"):
        raise ValueError(f"truncated PNG ({len(data)} bytes, no IEND)")
    pos = 8
    while pos < len(data):  # walk the chunks: lengths and CRCs must add up
        if pos + 8 > len(data):
            raise ValueError("truncated PNG chunk header")
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        end = pos + 12 + length
        if end > len(data):
            raise ValueError("truncated PNG chunk")
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(data[pos + 4 : end - 4]) & 0xFFFFFFFF != crc:
            raise ValueError(f"corrupt PNG chunk {kind!r}")
        pos = end
        if kind == b"IEND":
            break
    return width, height


# `screencap` without -p: a little-endian header (width, height, pixel format, and since Android 9 a
# colour space) and then the pixels, 4 bytes each for the formats phones use. No encoding on the phone:
# about 3x faster than `screencap -p` on real phones (DESIGN.md §10).
RAW_FORMATS = {1: "RGBX", 2: "RGBX", 5: "BGRX"}  # RGBA_8888, RGBX_8888, BGRA_8888 -> Pillow raw modes


class RawFormatUnsupported(ValueError):
    """The phone's raw screenshot uses a pixel format we do not read (the PNG path is used instead)."""


def decode_raw_screencap(data: bytes) -> Any:
    """The RGB picture in a raw `screencap` reply; ValueError when it is truncated or malformed."""
    from PIL import Image

    if len(data) < 12:
        raise ValueError(f"raw screenshot too short ({len(data)} bytes)")
    width, height, fmt = struct.unpack("<III", data[:12])
    if not (0 < width <= 16_384 and 0 < height <= 16_384):
        raise ValueError(f"raw screenshot with an impossible size {width}x{height}")
    if fmt not in RAW_FORMATS:
        raise RawFormatUnsupported(f"raw screenshot in pixel format {fmt}")
    # Whole rows after a 16- or 12-byte header; some phones pad each row to an aligned stride, which is
    # cut off rather than read as picture.
    for header in (16, 12):
        stride, extra = divmod(len(data) - header, height * 4)
        if extra == 0 and width <= stride <= width + 256:
            image = Image.frombytes("RGB", (stride, height), data[header:], "raw", RAW_FORMATS[fmt])
            return image if stride == width else image.crop((0, 0, width, height))
    raise ValueError(f"raw screenshot of {width}x{height} has {len(data)} bytes, not {16 + width * height * 4} "
                     "(truncated)")


def _all_black(image: Any) -> bool:
    extrema = image.convert("L").getextrema()
    return extrema[1] <= 8
