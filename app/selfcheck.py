"""`phonebuddy --self-check`: prove that every part of this installation loads and works, print a report,
exit 0 (all well) or 1 (something is missing or broken). For installers' CI, for users and for support.

Runs off-screen (QT_QPA_PLATFORM=offscreen unless set) and touches no real phone and no shared adb
server: the adb server it starts listens on a private free port (never 5037) with its own HOME, and
is stopped by its process id. Checks, in order (each one a `Check` with a name, a status and a detail):

1. files: every bundled file the app needs at run time (`REQUIRED_FILES`: the adb binary, the scrcpy
   server jar, piper's espeak-ng data, the CJK font; in a bundle also the licence notices). A missing
   one is reported by its full path.
2. qt: PySide6 imports, the offscreen and the native platform plugins are on disk, a widget renders.
3. main window: the real window (app.main.build_window) builds off-screen and passes the
   accessibility audit (app.audit).
4. speech runtime: onnxruntime and ctranslate2 (faster-whisper) import; piper's espeak-ng phonemizes
   English with the bundled data; every earcon is generated.
5. adb: the bundled binary answers `adb version`.
6. scrcpy server: the jar is a readable archive with the server's classes.
7. simulated phone: PhoneWorld-lite renders (English and Chinese), its adbd answers the real adb
   server (`adb connect`), and one task is solved by the oracle through the agent loop and the safety
   gate over ADB; the task's verifier must pass.
8. policy runtime: whether the local model runtime (torch + transformers) is present. The default
   bundle leaves it out on purpose, so its absence is INFO, not a failure; the line says what to do.

`run_checks(args, build_window)` returns the list; `main(args, build_window)` prints it and returns the exit
code (app.main passes its parsed arguments and its window builder, so this module never imports app.main).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SELF_CHECK_TASK = "SettingsTurnOnWifi"
ADB_NAME = "adb.exe" if sys.platform == "win32" else "adb"
LICENCES_FILE = "THIRD_PARTY_LICENSES.txt"
BUNDLED_FONT = "fonts/wqy-microhei.ttc"  # installers/manifest.py FONT_DEST/FONT_FILE


class Status(StrEnum):
    OK = "OK"
    FAIL = "FAIL"
    INFO = "INFO"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    seconds: float = 0.0


class PartMissingError(RuntimeError):
    """A file this installation must carry is not there; the message names it."""


def is_bundle() -> bool:
    return bool(getattr(sys, "frozen", False))


def data_root() -> Path:
    """The bundle's data folder (PyInstaller's _MEIPASS); the project root from a source checkout."""
    if is_bundle():
        return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
    return Path(__file__).resolve().parent.parent


def package_dir(module: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise PartMissingError(f"Python package {module!r} is missing from this installation")
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class RequiredFile:
    """A file the app reads at run time: `package`'s folder joined with `rel` (installers/manifest.py's
    DATA_PARTS name the same files by their place in the bundle: `<package>/<rel>`)."""

    name: str
    package: str
    rel: str

    def path(self) -> Path:
        return package_dir(self.package) / self.rel

    @property
    def bundle_path(self) -> str:
        return f"{self.package}/{self.rel}"


ADB_FILE = RequiredFile("adb binary", "adbutils", f"binaries/{ADB_NAME}")
SCRCPY_FILE = RequiredFile("scrcpy server", "scrcpy", "scrcpy-server.jar")
ESPEAK_FILE = RequiredFile("espeak-ng data", "piper", "espeak-ng-data/phontab")
REQUIRED_FILES = (ADB_FILE, SCRCPY_FILE, ESPEAK_FILE)


def require(path: Path, what: str) -> Path:
    if not path.is_file():
        raise PartMissingError(f"{what}: missing file {path}")
    return path


def adb_path() -> Path:
    return require(ADB_FILE.path(), ADB_FILE.name)


def check_files() -> str:
    missing, found = [], []
    for part in REQUIRED_FILES:
        try:
            path = part.path()
        except PartMissingError as exc:
            missing.append(str(exc))
            continue
        if path.is_file():
            found.append(f"{part.name}: {path}")
        else:
            missing.append(f"{part.name}: missing file {path}")
    from harness.phoneworld.render import FontMissingError, find_cjk_font

    if is_bundle():  # the bundle carries its own font; a system font must not hide its absence
        font = data_root() / BUNDLED_FONT
        if font.is_file():
            found.append(f"CJK font: {font}")
        else:
            missing.append(f"CJK font: missing file {font}")
    else:
        try:
            found.append(f"CJK font: {find_cjk_font()}")
        except FontMissingError as exc:
            missing.append(f"CJK font: {exc}")
    if is_bundle():
        notices = data_root() / LICENCES_FILE
        if notices.is_file():
            found.append(f"licence notices: {notices}")
        else:
            missing.append(f"licence notices: missing file {notices}")
    if missing:
        raise PartMissingError("; ".join(missing))
    return f"{len(found)} files present"


def check_qt() -> str:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import QLibraryInfo
    from PySide6.QtWidgets import QApplication, QLabel

    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
    wanted = {"linux": ("offscreen", "xcb"), "win32": ("offscreen", "windows"), "darwin": ("offscreen", "cocoa")}
    names = {p.name for p in plugins.glob("*")} if plugins.is_dir() else set()
    for plugin in wanted.get(sys.platform, ("offscreen",)):
        if not any(plugin in n for n in names):
            raise PartMissingError(f"Qt platform plugin {plugin!r}: missing from {plugins}")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    label = QLabel("PhoneBuddy 手机助手")
    label.resize(240, 40)
    label.show()
    app.processEvents()
    image = label.grab().toImage()
    label.close()
    if image.isNull() or image.width() < 1:
        raise RuntimeError("a Qt widget rendered an empty image")
    return f"PySide6 {pyside_version}, platform {app.platformName()}, plugins {', '.join(sorted(names))}"


def check_window(args, build_window: Callable[[Any], Any]) -> str:
    """`build_window` is app.main's (given by app.main, which imports this module: no cycle)."""
    from PySide6.QtWidgets import QApplication

    from app.audit import audit_widget_tree

    app = QApplication.instance() or QApplication(sys.argv[:1])
    started = time.perf_counter()
    window = build_window(args)
    window.show()
    app.processEvents()
    try:
        problems = [str(p) for p in audit_widget_tree(window)]
    finally:
        window.shutdown()
    if problems:
        raise RuntimeError("accessibility audit: " + "; ".join(problems[:5]))
    return f"built and audited in {time.perf_counter() - started:.2f} s"


def check_speech() -> str:
    import ctranslate2
    import faster_whisper
    import onnxruntime

    from speech.earcons import Earcon, earcon_audio

    espeak = require(ESPEAK_FILE.path(), ESPEAK_FILE.name)
    from piper.phonemize_espeak import EspeakPhonemizer

    phonemes = EspeakPhonemizer(espeak.parent).phonemize("en-us", "Hello, I am PhoneBuddy.")
    if not phonemes or not phonemes[0]:
        raise RuntimeError("espeak-ng produced no phonemes")
    for name in Earcon:
        if earcon_audio(name).size == 0:
            raise RuntimeError(f"earcon {name} is empty")
    return (f"onnxruntime {onnxruntime.__version__}, ctranslate2 {ctranslate2.__version__}, "
            f"faster-whisper {faster_whisper.__version__}, espeak-ng phonemes ok, {len(Earcon)} earcons")


def check_adb() -> str:
    adb = adb_path()
    if not os.access(adb, os.X_OK):
        raise PartMissingError(f"adb binary: {adb} is not executable")
    out = subprocess.run([str(adb), "version"], capture_output=True, text=True, timeout=20)
    if out.returncode != 0 or "Android Debug Bridge" not in out.stdout:
        raise RuntimeError(f"`adb version` failed (exit {out.returncode}): {(out.stdout + out.stderr).strip()[:200]}")
    return " / ".join(line.strip() for line in out.stdout.splitlines()[:2])


def check_scrcpy() -> str:
    jar = require(SCRCPY_FILE.path(), SCRCPY_FILE.name)
    if not zipfile.is_zipfile(jar):
        raise RuntimeError(f"scrcpy server {jar} is not a valid archive")
    with zipfile.ZipFile(jar) as z:
        if "classes.dex" not in z.namelist():
            raise RuntimeError(f"scrcpy server {jar} has no classes.dex")
    import cv2  # the real OpenCV from a source install, the bundle's numpy stand-in otherwise
    import numpy as np
    import scrcpy  # muti-scrcpy-client: imports cv2 and av as the mirror does

    bgr = np.array([[[1, 2, 3]]], np.uint8)
    if cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).tolist() != [[[3, 2, 1]]]:
        raise RuntimeError("cv2.cvtColor(BGR2RGB) gave a wrong frame")
    return f"{jar.name} ({jar.stat().st_size:,} bytes), client {scrcpy.__name__} with cv2 {cv2.__version__}"


def check_phone() -> str:
    """Render the simulated phone, serve it to a private real adb server, and solve one task over ADB."""
    from assistant_core.confirm import FixedConfirmer
    from assistant_core.loop import ScriptedUser
    from assistant_core.types import ConfirmAnswer
    from harness.adb import connect
    from harness.adbserver import DEFAULT_ADB_PORT, AdbServer
    from harness.opener import Target, open_phone
    from harness.phoneworld.phone import SimPhone
    from harness.phoneworld.tasks import make_world, registry
    from harness.phoneworld.world import World
    from phonebuddy.assemble import RunSpec, assemble
    from phonebuddy.policyspec import PolicySpec, PolicyTarget, build_policy

    for lang in ("en", "zh"):
        shot = World(seed=0, language=lang).screenshot()
        if shot.size != (1080, 2400) or shot.getbbox() is None:
            raise RuntimeError(f"the simulated phone rendered an empty {lang} screen")
    task = registry.get(SELF_CHECK_TASK)
    world, params = make_world(SELF_CHECK_TASK, 0, "en")
    server = AdbServer(adb_path=str(adb_path()))
    if server.port == DEFAULT_ADB_PORT:  # AdbServer refuses it too; belt and braces for a support tool
        raise RuntimeError("refusing to use the shared adb port 5037")
    phone = SimPhone(world).start()
    address, steps = phone.address, 0
    try:
        server.start()
        client = server.client()
        connect(client, phone.address)
        state = server.wait_state(phone.address)
        if state != "device":
            raise RuntimeError(f"the simulated phone's adbd stayed in state {state!r}")
        device = open_phone(Target(False, serial=phone.address), client=client).device  # harness.opener
        parts = assemble(RunSpec(device=device, lang="en", simulated=True, task=task, thumbnails=False,
                                 verify=False))
        gen = parts.episode(task.instruction(params).get("en"),
                            policy=build_policy(PolicySpec("oracle", fast_path=False), PolicyTarget(
                                world=world, task_id=SELF_CHECK_TASK, params=params)),
                            confirmer=FixedConfirmer(ConfirmAnswer.YES), user=ScriptedUser(), sleep=lambda s: None)
        while True:
            try:
                next(gen)
                steps += 1
            except StopIteration as stop:
                result = stop.value
                break
        with contextlib.suppress(Exception):
            client.disconnect(phone.address)
    finally:
        phone.stop()
        server.stop()
    if not task.is_successful(world, params):
        raise RuntimeError(f"task {SELF_CHECK_TASK} not solved over ADB (outcome {getattr(result, 'outcome', '?')})")
    return f"rendered en+zh, adbd on {address} answered adb server port {server.port}, " \
           f"{SELF_CHECK_TASK} solved through the agent loop ({steps} events)"


def check_policy_runtime() -> tuple[Status, str]:
    have = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
    if have:
        return Status.OK, "local model runtime present (torch + transformers)"
    return Status.INFO, ("no local model runtime in this installation (the bundle leaves torch/transformers out "
                         "to stay small): use a model server (Settings > model server address) or install the "
                         "ML pack (installers/README.md)")


def run_checks(args, build_window: Callable[[Any], Any], *,
               on_result: Callable[[Check], None] | None = None) -> list[Check]:
    """Every check, in order; a failing check never stops the next one. `args` are app.main's parsed
    arguments and `build_window` its window builder."""
    steps: list[tuple[str, Callable[[], str]]] = [
        ("files", check_files),
        ("qt", check_qt),
        ("main window", lambda: check_window(args, build_window)),
        ("speech runtime", check_speech),
        ("adb", check_adb),
        ("scrcpy server", check_scrcpy),
        ("simulated phone", check_phone),
    ]
    results: list[Check] = []
    for name, fn in steps:
        started = time.perf_counter()
        try:
            detail = fn()
            status = Status.OK
        except Exception as exc:  # a support tool reports every failure and carries on
            log.debug("self-check %s failed", name, exc_info=True)
            status, detail = Status.FAIL, f"{type(exc).__name__}: {exc}"
        check = Check(name, status, detail, time.perf_counter() - started)
        results.append(check)
        if on_result is not None:
            on_result(check)
    status, detail = check_policy_runtime()
    results.append(Check("policy runtime", status, detail))
    if on_result is not None:
        on_result(results[-1])
    return results


def format_check(check: Check) -> str:
    return f"  {check.status:<4}  {check.name:<16} {check.detail}  ({check.seconds:.2f} s)"


def main(args, build_window: Callable[[Any], Any]) -> int:
    """Print the report (CLI output) and return 0 when no check failed, else 1. app.main calls it with its
    parsed arguments and its window builder (so this module never imports app.main)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    kind = "bundle" if is_bundle() else "source install"
    print(f"PhoneBuddy self-check ({kind}, {data_root()}, Python {sys.version.split()[0]}, {sys.platform})",
          flush=True)
    results = run_checks(args, build_window, on_result=lambda c: print(format_check(c), flush=True))
    failed = [c for c in results if c.status is Status.FAIL]
    print(f"PhoneBuddy self-check: {'OK' if not failed else 'FAILED: ' + ', '.join(c.name for c in failed)} "
          f"in {time.perf_counter() - started:.1f} s", flush=True)
    return 1 if failed else 0
