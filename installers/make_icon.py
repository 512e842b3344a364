"""Draw the PhoneBuddy icon (a phone with a speech wave, high contrast) into installers/assets/:
phonebuddy.png (256 px), phonebuddy.ico (16-256 px) and phonebuddy.icns. Run once; the files are committed.

    python installers/make_icon.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent))
import manifest


def draw(size: int = 1024) -> Image.Image:
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    s = size / 256
    d.rounded_rectangle((8 * s, 8 * s, 248 * s, 248 * s), radius=48 * s, fill=(18, 52, 120, 255))
    d.rounded_rectangle((70 * s, 36 * s, 150 * s, 220 * s), radius=14 * s, fill=(255, 255, 255, 255))
    d.rectangle((80 * s, 56 * s, 140 * s, 190 * s), fill=(18, 52, 120, 255))
    d.ellipse((103 * s, 198 * s, 117 * s, 212 * s), fill=(18, 52, 120, 255))
    for i, r in enumerate((28, 48, 68)):
        box = (150 * s - r * s, 128 * s - r * s, 150 * s + r * s, 128 * s + r * s)
        d.arc(box, start=-45, end=45, fill=(255, 214, 0, 255), width=int((10 - i) * s))
    return img


def main() -> int:
    big = draw()
    manifest.ICON_PNG.parent.mkdir(parents=True, exist_ok=True)
    big.resize((256, 256), Image.LANCZOS).save(manifest.ICON_PNG)
    big.save(manifest.ICON_ICO, sizes=[(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
    big.resize((512, 512), Image.LANCZOS).save(manifest.ICON_ICNS)
    print("icons written to", manifest.ICON_PNG.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
