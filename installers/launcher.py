"""The bundle's entry point: prepares the frozen environment, then hands over to `phonebuddy.cli.main`.

Inside a PyInstaller bundle (sys.frozen) it
- points PhoneWorld-lite at the bundled CJK font (`$PHONEWORLD_FONT`, unless the user set one);
- adds the optional ML pack to sys.path: a folder holding torch + transformers (+ bitsandbytes, peft)
  installed with `pip install --target` for the same Python (3.11), at `$PHONEBUDDY_ML_PACK`, else
  `<user data dir>/PhoneBuddy/ml-pack`. Without it the local policy is unavailable and the app says so;
  a model server works without it (installers/README.md).
- registers installers/compat/phonebuddy_cv2_lite as `cv2` (OpenCV stays out of the bundle: README.md);
- marks the process as a bundle (`PHONEBUDDY_BUNDLE=1`) so the first-run wizard and the self-check know.
From a source checkout it does nothing but call phonebuddy.cli.main.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _data_root() -> Path:
    return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))


def _user_data_dir() -> Path:
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))


def prepare_frozen_environment() -> None:
    root = _data_root()
    os.environ["PHONEBUDDY_BUNDLE"] = "1"
    try:
        import cv2  # noqa: F401 - a bundle built with OpenCV (or an ML pack that has it)
    except ImportError:
        import phonebuddy_cv2_lite

        sys.modules["cv2"] = phonebuddy_cv2_lite  # the two calls the mirror makes (installers/compat)
    font = root / "fonts" / "wqy-microhei.ttc"
    if font.is_file():
        os.environ.setdefault("PHONEWORLD_FONT", str(font))
    pack = Path(os.environ.get("PHONEBUDDY_ML_PACK") or _user_data_dir() / "PhoneBuddy" / "ml-pack")
    if (pack / "torch").is_dir():
        sys.path.append(str(pack))  # appended: the bundle's own numpy etc. win over the pack's copies
        os.environ["PHONEBUDDY_ML_PACK_ACTIVE"] = str(pack)


# What the default bundle leaves out (installers/manifest.py EXCLUDED_MODULES, the parts users can reach).
LEFT_OUT = ("torch", "transformers", "trl", "bitsandbytes", "peft", "accelerate", "datasets", "training")


def main() -> int:
    frozen = getattr(sys, "frozen", False)
    if frozen:
        prepare_frozen_environment()
    from phonebuddy.cli import main as cli_main

    try:
        return int(cli_main(sys.argv[1:]) or 0)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not frozen or top not in LEFT_OUT:
            raise
        print(f"phonebuddy: this command needs {top!r}, which the PhoneBuddy installer leaves out to stay small. "
              "Use a source install (pip install -e '.[all]') or the ML pack (see installers/README.md). "
              "The app itself works with a model server or the demonstration.\n"
              f"手机助手：此命令需要 {top}，安装包为保持小巧没有包含它。请使用源码安装或机器学习扩展包。",
              file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
