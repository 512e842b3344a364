"""Draws the laid-out screen (ui.Box trees) into a PIL image. Only ever called from
`World.screenshot()`, so a step that takes no screenshot costs no drawing.

Speed: text is the expensive part of PIL (FreeType rasterises each glyph), so every (line, size, colour)
is rasterised once into an ink image + mask and pasted afterwards; photos and icons come from
`ImageSource`, which caches them by key and size. Both caches live on the `Renderer` instance, which
the world keeps across resets (their contents depend only on their keys, so they stay valid).
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from harness.phoneworld.ui import PAD, Box, Kind, Rect, Style, walk

log = logging.getLogger(__name__)

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)


class FontMissingError(RuntimeError):
    """No CJK-capable font was found."""


def find_cjk_font() -> str:
    """The path of a CJK-capable font: $PHONEWORLD_FONT, else the first of FONT_CANDIDATES that exists."""
    env = os.environ.get("PHONEWORLD_FONT")
    if env and Path(env).is_file():
        return env
    for path in FONT_CANDIDATES:
        if Path(path).is_file():
            return path
    raise FontMissingError(
        "PhoneWorld needs a CJK font to draw screenshots: install fonts-wqy-microhei "
        "(apt-get install fonts-wqy-microhei, as scripts/dev.sh does) or set PHONEWORLD_FONT to a .ttc/.ttf file. "
        f"Looked in: {', '.join(FONT_CANDIDATES)}"
    )


@dataclass(frozen=True)
class Theme:
    bg: tuple[int, int, int]
    surface: tuple[int, int, int]
    text: tuple[int, int, int]
    muted: tuple[int, int, int]
    accent: tuple[int, int, int]
    danger: tuple[int, int, int]
    divider: tuple[int, int, int]
    button: tuple[int, int, int]
    outgoing: tuple[int, int, int]
    incoming: tuple[int, int, int]
    bar: tuple[int, int, int]


LIGHT = Theme(
    (255, 255, 255),
    (243, 244, 248),
    (20, 20, 24),
    (110, 112, 120),
    (26, 115, 232),
    (217, 48, 37),
    (225, 226, 230),
    (232, 234, 240),
    (149, 236, 105),
    (240, 240, 240),
    (250, 250, 252),
)
DARK = Theme(
    (18, 18, 20),
    (38, 38, 44),
    (235, 235, 240),
    (150, 152, 160),
    (138, 180, 248),
    (242, 139, 130),
    (55, 55, 62),
    (52, 52, 60),
    (46, 125, 50),
    (48, 48, 54),
    (28, 28, 32),
)
WARNING_BG = (255, 244, 214)


def photo_image(seed: int, size: tuple[int, int]) -> Image.Image:
    """A deterministic 'photo' (sky, sun, hills) drawn from `seed`."""
    rng = random.Random(seed)
    w, h = size
    sky = (rng.randint(60, 200), rng.randint(120, 220), rng.randint(180, 255))
    img = Image.new("RGB", size, sky)
    d = ImageDraw.Draw(img)
    r = int(min(w, h) * rng.uniform(0.08, 0.16))
    cx, cy = int(w * rng.uniform(0.2, 0.8)), int(h * rng.uniform(0.15, 0.4))
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(255, rng.randint(180, 240), rng.randint(40, 120)))
    for layer in range(3):
        base = int(h * (0.55 + 0.12 * layer))
        pts = [(0, h)]
        for i in range(7):
            pts.append((int(w * i / 6), base - rng.randint(0, int(h * 0.18))))
        pts.append((w, h))
        g = 90 + 40 * layer
        d.polygon(pts, fill=(rng.randint(20, 90), min(255, g + rng.randint(0, 60)), rng.randint(30, 90)))
    return img


class ImageSource:
    """Images by key: 'photo:<int seed>' (generated photos), 'photozoom:<seed>' (its centre, zoomed),
    'app:<hex colour>:<letter>' (app icons)."""

    def __init__(self, font_path: str):
        self._font_path = font_path
        self._cache: dict[tuple[str, int, int], Image.Image] = {}

    def get(self, key: str, size: tuple[int, int]) -> Image.Image | None:
        ck = (key, size[0], size[1])
        hit = self._cache.get(ck)
        if hit is not None:
            return hit
        img = self._make(key, size)
        if img is not None:
            if len(self._cache) > 512:
                self._cache.clear()
            self._cache[ck] = img
        return img

    def _make(self, key: str, size: tuple[int, int]) -> Image.Image | None:
        kind, _, rest = key.partition(":")
        if kind == "photo":
            return photo_image(int(rest), size)
        if kind == "photozoom":  # the centre of the photo at twice the scale
            w, h = size
            return photo_image(int(rest), (2 * w, 2 * h)).crop((w // 2, h // 2, w // 2 + w, h // 2 + h))
        if kind == "app":
            colour, _, letter = rest.partition(":")
            rgb = tuple(int(colour[i : i + 2], 16) for i in (0, 2, 4))
            img = Image.new("RGB", size, (255, 255, 255))
            d = ImageDraw.Draw(img)
            d.rounded_rectangle((0, 0, size[0] - 1, size[1] - 1), radius=size[0] // 4, fill=rgb)
            font = ImageFont.truetype(self._font_path, int(size[1] * 0.5))
            d.text((size[0] // 2, size[1] // 2), letter, font=font, fill=(255, 255, 255), anchor="mm")
            return img
        return None


SYS_GLYPHS = {
    "sys:back": "←",
    "sys:add": "+",
    "sys:close": "×",
    "sys:check": "✓",
    "sys:send": "▶",
    "sys:star": "★",
    "sys:menu": "≡",
    "sys:up": "▲",
    "sys:down": "▼",
    "sys:left": "◀",
    "sys:right": "▶",
    "sys:dot": "●",
}


class Renderer:
    """Turns laid-out boxes into an RGB image of the screen."""

    def __init__(self, font_path: str | None = None):
        self.font_path = font_path or find_cjk_font()
        self._fonts: dict[int, ImageFont.FreeTypeFont] = {}
        self._text: dict[tuple[str, int, tuple[int, int, int]], tuple[Image.Image, Image.Image, int]] = {}
        self.images = ImageSource(self.font_path)

    def font(self, px: int) -> ImageFont.FreeTypeFont:
        f = self._fonts.get(px)
        if f is None:
            f = self._fonts[px] = ImageFont.truetype(self.font_path, px)
        return f

    def _glyphs(
        self, text: str, px: int, colour: tuple[int, int, int]
    ) -> tuple[Image.Image, Image.Image, int]:
        key = (text, px, colour)
        hit = self._text.get(key)
        if hit is not None:
            return hit
        font = self.font(px)
        left, top, right, bottom = font.getbbox(text)
        w, h = max(1, right), max(1, int(px * 1.3))
        mask = Image.new("L", (w, h), 0)
        ImageDraw.Draw(mask).text((0, 0), text, font=font, fill=255)
        ink = Image.new("RGB", (w, h), colour)
        if len(self._text) > 6000:
            self._text.clear()
        self._text[key] = hit = (ink, mask, w)
        return hit

    def text_width(self, text: str, px: int) -> int:
        return self._glyphs(text, px, (0, 0, 0))[2]

    def draw_text(
        self,
        img: Image.Image,
        xy: tuple[int, int],
        text: str,
        px: int,
        colour,
        clip: Rect,
        *,
        anchor: str = "l",
    ) -> None:
        if not text:
            return
        ink, mask, w = self._glyphs(text, px, colour)
        x, y = xy
        if anchor == "m":
            x -= w // 2
        elif anchor == "r":
            x -= w
        h = mask.size[1]
        cl, ct, cr, cb = clip
        l0, t0 = max(x, cl), max(y, ct)
        r0, b0 = min(x + w, cr), min(y + h, cb)
        if r0 <= l0 or b0 <= t0:
            return
        if (l0, t0, r0, b0) != (x, y, x + w, y + h):
            crop = (l0 - x, t0 - y, r0 - x, b0 - y)
            img.paste(ink.crop(crop), (l0, t0), mask.crop(crop))
        else:
            img.paste(ink, (x, y), mask)

    def render(self, roots: list[Box], size: tuple[int, int], *, dark: bool = False) -> Image.Image:
        theme = DARK if dark else LIGHT
        img = Image.new("RGB", size, theme.bg)
        draw = ImageDraw.Draw(img)
        for root in roots:
            if root.static:
                self._paste_tile(img, root, theme, dark)
                continue
            for box in walk(root):
                if box.visible:
                    self._draw_box(img, draw, box, theme)
        return img

    def _paste_tile(self, img: Image.Image, root: Box, theme: Theme, dark: bool) -> None:
        """Static roots (status bar, launcher, keyboard...) are drawn once per theme and pasted after."""
        if root.tiles is None:
            root.tiles = {}
        tile = root.tiles.get(dark)
        if tile is None:
            scratch = Image.new("RGB", img.size, theme.bg)
            draw = ImageDraw.Draw(scratch)
            for box in walk(root):
                if box.visible:
                    self._draw_box(scratch, draw, box, theme)
            tile = root.tiles[dark] = scratch.crop(root.clip)
        img.paste(tile, root.clip[:2])

    # One method per kind would be tidier, but a flat dispatch keeps the hot loop cheap.
    def _draw_box(self, img: Image.Image, d: ImageDraw.ImageDraw, box: Box, th: Theme) -> None:
        n = box.node
        k = n.kind
        l, t, r, b = box.rect  # noqa: E741
        clip = box.clip
        cl, ct, cr, cb = clip

        def rect(x0, y0, x1, y1, fill, radius=0):
            x0, y0, x1, y1 = max(x0, cl), max(y0, ct), min(x1, cr), min(y1, cb)
            if x1 > x0 and y1 > y0:
                if radius:
                    d.rounded_rectangle((x0, y0, x1 - 1, y1 - 1), radius=radius, fill=fill)
                else:
                    d.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill)

        px = box.px
        lh = int(px * 1.35)
        if k is Kind.TOOLBAR:
            rect(l, t, r, b, th.bar)
            rect(l, b - 2, r, b, th.divider)
        elif k is Kind.SCRIM:
            if n.style is Style.NORMAL:
                rect(l, t, r, b, (90, 90, 96) if th is LIGHT else (5, 5, 8))
        elif k is Kind.DIALOG:
            rect(l, t, r, b, th.surface if n.style is not Style.WARNING else WARNING_BG, radius=36)
        elif k is Kind.COLUMN:
            if n.blocking:  # system panels (shade, keyboard) are opaque
                rect(l, t, r, b, th.bar)
        elif k is Kind.TITLE:
            y = t + max(14, (b - t - len(box.lines) * lh) // 2)
            for line in box.lines:
                self.draw_text(img, (l + PAD, y), line, px, th.text, clip)
                y += lh
        elif k is Kind.LABEL:
            colour = th.muted if n.style is Style.MUTED else th.danger if n.style is Style.DANGER else th.text
            if n.style is Style.WARNING:
                rect(l, t, r, b, WARNING_BG)
                colour = (120, 60, 0)
            y = t + 14
            for line in box.lines:
                self.draw_text(img, (l + PAD, y), line, px, colour, clip)
                y += lh
        elif k is Kind.BUBBLE:
            outgoing = n.style is Style.OUTGOING
            widths = [self.text_width(line, px) for line in box.lines]
            bw = max(widths, default=0) + 2 * 36
            x0 = r - PAD - bw if outgoing else l + PAD
            rect(x0, t + 12, x0 + bw, b - 12, th.outgoing if outgoing else th.incoming, radius=28)
            y = t + 12 + 16
            ink = (20, 20, 24) if outgoing else th.text
            for line in box.lines:
                self.draw_text(img, (x0 + 36, y), line, px, ink, clip)
                y += lh
        elif k in (Kind.BUTTON, Kind.KEY):
            fill = (
                th.accent if n.style is Style.PRIMARY else th.danger if n.style is Style.DANGER else th.button
            )
            if not n.enabled:
                fill = th.divider
            ink = (255, 255, 255) if n.style in (Style.PRIMARY, Style.DANGER) else th.text
            m = 8 if k is Kind.KEY else 16
            rect(l + m, t + m, r - m, b - m, fill, radius=20 if k is Kind.KEY else 40)
            line = box.lines[0] if box.lines else ""
            self.draw_text(img, ((l + r) // 2, (t + b) // 2 - int(px * 0.6)), line, px, ink, clip, anchor="m")
        elif k is Kind.ITEM:
            if n.selected:
                rect(l, t, r, b, th.surface)
            x = l + PAD
            if n.image:
                size = min(b - t - 30, 120)
                self._paste_image(img, n.image, (x, t + (b - t - size) // 2), (size, size), clip)
                x += size + 30
            if box.sub_lines:
                self.draw_text(img, (x, t + 22), box.lines[0], px, th.text, clip)
                self.draw_text(img, (x, t + 22 + lh), box.sub_lines[0], int(px * 0.8), th.muted, clip)
            else:
                self.draw_text(img, (x, (t + b) // 2 - int(px * 0.65)), box.lines[0], px, th.text, clip)
            rect(l + PAD, b - 2, r, b, th.divider)
        elif k in (Kind.SWITCH, Kind.CHECKBOX):
            self.draw_text(
                img,
                (l + PAD, (t + b) // 2 - int(px * 0.65)),
                box.lines[0],
                px,
                th.text if n.enabled else th.muted,
                clip,
            )
            cy = (t + b) // 2
            if k is Kind.SWITCH:
                on = bool(n.checked)
                rect(r - PAD - 130, cy - 32, r - PAD, cy + 32, th.accent if on else th.divider, radius=32)
                kx = r - PAD - 34 if on else r - PAD - 96
                rect(kx - 26, cy - 26, kx + 26, cy + 26, (255, 255, 255), radius=26)
            else:
                rect(
                    r - PAD - 70, cy - 35, r - PAD, cy + 35, th.accent if n.checked else th.divider, radius=8
                )
                if n.checked:
                    self.draw_text(img, (r - PAD - 35, cy - 30), "✓", 48, (255, 255, 255), clip, anchor="m")
            rect(l + PAD, b - 2, r, b, th.divider)
        elif k is Kind.FIELD:
            rect(l + PAD, t + 12, r - PAD, b - 12, th.surface, radius=20)
            rect(l + PAD, b - 16, r - PAD, b - 12, th.accent if box.focused else th.divider)
            value = n.bind.get() if n.bind is not None else ""
            lines = box.lines or [""]
            y = (t + b) // 2 - int(px * 0.65) if len(lines) == 1 and b - t < 300 else t + 30
            for line in lines:
                self.draw_text(img, (l + PAD + 30, y), line, px, th.text if value else th.muted, clip)
                y += lh
            if box.focused:
                cx = l + PAD + 30 + (self.text_width(lines[-1], px) if value else 0) + 4
                cy = y - lh + int(px * 0.65)
                rect(cx, cy - 30, cx + 4, cy + 30, th.accent)
        elif k is Kind.SLIDER:
            self.draw_text(img, (l + PAD, t + 10), box.lines[0] if box.lines else n.text, px, th.text, clip)
            ty = b - 40
            rect(l + PAD, ty - 6, r - PAD, ty + 6, th.divider, radius=6)
            kx = l + PAD + int((r - l - 2 * PAD) * n.value)
            rect(l + PAD, ty - 6, kx, ty + 6, th.accent, radius=6)
            rect(kx - 24, ty - 24, kx + 24, ty + 24, th.accent, radius=24)
        elif k is Kind.ICON:
            if n.image in SYS_GLYPHS:
                self.draw_text(
                    img, ((l + r) // 2, (t + b) // 2 - 32), SYS_GLYPHS[n.image], 56, th.text, clip, anchor="m"
                )
            elif n.image:
                size = min(r - l, b - t) - 20
                if n.text:  # home-screen icon with its label underneath
                    size = min(r - l - 60, b - t - 90)
                    self._paste_image(img, n.image, ((l + r - size) // 2, t + 10), (size, size), clip)
                    self.draw_text(img, ((l + r) // 2, t + size + 20), n.text, 34, th.text, clip, anchor="m")
                else:
                    self._paste_image(
                        img, n.image, ((l + r - size) // 2, (t + b - size) // 2), (size, size), clip
                    )
            else:
                ch = (n.text or n.desc or "?")[:1]
                self.draw_text(img, ((l + r) // 2, (t + b) // 2 - 28), ch, 48, th.text, clip, anchor="m")
        elif k is Kind.IMAGE:
            w, h = r - l - 2 * 10, b - t - 2 * 10
            if n.image and w > 0 and h > 0:
                self._paste_image(img, n.image, (l + 10, t + 10), (w, h), clip)

    def _paste_image(
        self, img: Image.Image, key: str, xy: tuple[int, int], size: tuple[int, int], clip: Rect
    ) -> None:
        src = self.images.get(key, size)
        if src is None:
            return
        x, y = xy
        w, h = src.size
        cl, ct, cr, cb = clip
        l0, t0, r0, b0 = max(x, cl), max(y, ct), min(x + w, cr), min(y + h, cb)
        if r0 <= l0 or b0 <= t0:
            return
        if (l0, t0, r0, b0) != (x, y, x + w, y + h):
            src = src.crop((l0 - x, t0 - y, r0 - x, b0 - y))
        img.paste(src, (l0, t0))
