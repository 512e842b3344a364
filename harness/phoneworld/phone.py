"""SimPhone: a World served as a phone over ADB, with the system bits a shell sees (IMEs, props, dumpsys),
and the fault switches tests flip.

    phone = SimPhone(World(seed=0)).start()      # adbd on 127.0.0.1:<free port>
    adb connect 127.0.0.1:<phone.port>          # then drive it with adb or adbutils
    phone.faults.secure = SecureMode.BLACK      # a FLAG_SECURE window: black capture
    phone.adbd.go_offline(1.0, 1.0)             # offline -> authorizing -> device
    phone.stop()

Everything that touches the World holds `phone.lock`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from PIL import Image

from harness.phoneworld.adbd import Adbd, DeviceProps
from harness.phoneworld.adbservices import PhoneServices, ShellIO
from harness.phoneworld.shell import ADB_IME, LATIN_IME, Shell
from harness.phoneworld.vfs import VirtualFS

if TYPE_CHECKING:
    from harness.phoneworld.world import World

log = logging.getLogger(__name__)

SYSTEM_PACKAGES = (
    "android",
    "com.android.systemui",
    "com.android.launcher3",
    "com.android.inputmethod.latin",
    "com.android.permissioncontroller",
    "com.android.shell",
)
ADB_KEYBOARD_PKG = "com.android.adbkeyboard"


class SecureMode(StrEnum):
    OFF = "off"
    BLACK = "black"  # a FLAG_SECURE window is on top: captures come back black
    FAIL = "fail"  # ... and screencap fails outright (some vendors)


@dataclass
class ScreenFaults:
    """Capture faults. Counters apply to the next N screencaps, then clear themselves."""

    secure: SecureMode = SecureMode.OFF
    hang_next: int = 0
    truncate_next: int = 0
    hang_s: float = 20.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take_hang(self) -> bool:
        with self._lock:
            if self.hang_next > 0:
                self.hang_next -= 1
                return True
            return False

    def take_truncate(self) -> bool:
        with self._lock:
            if self.truncate_next > 0:
                self.truncate_next -= 1
                return True
            return False


@dataclass(frozen=True)
class ImeResult:
    ok: bool
    message: str


class ImeRegistry:
    """Input methods: what `ime list/set/enable` and `settings get secure default_input_method` see."""

    def __init__(self, *, adb_keyboard: bool = True):
        self.available = [LATIN_IME] + ([ADB_IME] if adb_keyboard else [])
        self.enabled = [LATIN_IME]
        self.current = LATIN_IME

    def _known(self, ime: str) -> str | None:
        for candidate in self.available:
            pkg, _, cls = candidate.partition("/")
            full = pkg + cls if cls.startswith(".") else cls
            if ime in (candidate, f"{pkg}/{full}"):
                return candidate
        return None

    def enable(self, ime: str) -> ImeResult:
        known = self._known(ime)
        if known is None:
            return ImeResult(False, f"Unknown input method {ime} cannot be enabled for user #0")
        if known not in self.enabled:
            self.enabled.append(known)
        return ImeResult(True, f"Input method {known}: now enabled for user #0")

    def disable(self, ime: str) -> ImeResult:
        known = self._known(ime)
        if known is None or known == LATIN_IME:
            return ImeResult(False, f"Input method {ime} cannot be disabled for user #0")
        if known in self.enabled:
            self.enabled.remove(known)
        if self.current == known:
            self.current = LATIN_IME
        return ImeResult(True, f"Input method {known}: now disabled for user #0")

    def set(self, ime: str) -> ImeResult:
        known = self._known(ime)
        if known is None or known not in self.enabled:
            return ImeResult(False, f"Unknown input method {ime} cannot be selected for user #0")
        self.current = known
        return ImeResult(True, f"Input method {known} selected for user #0")

    def reset(self) -> None:
        self.enabled = [LATIN_IME]
        self.current = LATIN_IME


def _window_hash(package: str) -> str:
    return f"{binascii.crc32(package.encode()) & 0xFFFFFFF:07x}"


class SimPhone:
    """A World behind a simulated adbd (and, on demand, a scrcpy server)."""

    def __init__(self, world: World, *, port: int = 0, adb_keyboard: bool = True, props: DeviceProps | None = None):
        self.world = world
        self.lock = threading.RLock()
        self.fs = VirtualFS()
        self.faults = ScreenFaults()
        # How raw `screencap` answers: pixel format 1 = RGBA_8888 (2 RGBX, 4 RGB_565, 5 BGRA) and the
        # header length (16 since Android 9, with a colour space; 12 before). Tests change them.
        self.raw_format = 1
        self.raw_header = 16
        self.ime = ImeRegistry(adb_keyboard=adb_keyboard)
        self.shell = Shell(self)
        self.services = PhoneServices(self.shell, self.fs)
        self.adbd = Adbd(self.services, port=port, props=props)
        self.scrcpy_servers: list = []  # running ScrcpyServer instances (harness.phoneworld.scrcpy_server)
        # Refusals a real phone may give a tool (harness.phoneworld.toolservices): permissions the shell user
        # lacks on this phone, and `cmd` services its Android version does not have. Tests fill them.
        self.denied_permissions: set[str] = set()
        self.missing_services: set[str] = set()
        self.commands_run = 0

    # --- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> SimPhone:
        self.adbd.start()
        return self

    def stop(self) -> None:
        for server in list(self.scrcpy_servers):
            server.stop()
        self.adbd.stop()

    @property
    def port(self) -> int:
        return self.adbd.port

    @property
    def address(self) -> str:
        return self.adbd.address

    def __enter__(self) -> SimPhone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- faults a test can act out (besides self.faults and self.adbd's) -------------------------------
    def lock_screen(self) -> None:
        with self.lock:
            self.world.lock()

    def crash_foreground(self) -> str | None:
        with self.lock:
            return self.world.crash_foreground()

    def drop_mirror(self) -> None:
        """Cut every scrcpy video/control socket (what a client sees when the server dies)."""
        for server in list(self.scrcpy_servers):
            server.drop_clients()

    # --- what the shell asks ----------------------------------------------------------------------------
    def is_secure_window(self) -> bool:
        return self.faults.secure is not SecureMode.OFF or bool(self.world.is_secure)

    def capture_fails(self) -> bool:
        return self.faults.secure is SecureMode.FAIL

    def capture_image(self) -> Image.Image:
        """What SurfaceFlinger would capture now: the screen, or black for a secure window."""
        if self.faults.secure is not SecureMode.OFF:
            return Image.new("RGB", (self.world.width, self.world.height), (0, 0, 0))
        return self.world.screenshot()

    def packages(self) -> list[str]:
        pkgs = set(self.world.installed_apps()) | set(SYSTEM_PACKAGES)
        if ADB_IME in self.ime.available:
            pkgs.add(ADB_KEYBOARD_PKG)
        return sorted(pkgs)

    def launcher_activity(self, package: str) -> str | None:
        app = self.world.apps.get(package)
        if app is None:
            return None
        activity = app.activity(app.start)
        return activity if activity.startswith(".") or "." in activity else "." + activity

    def props(self) -> dict[str, str]:
        p = self.adbd.props
        lang = "zh-CN" if self.world.language == "zh" else "en-US"
        return {
            "ro.product.model": p.model,
            "ro.product.name": p.product,
            "ro.product.device": p.device,
            "ro.product.manufacturer": "PhoneWorld",
            "ro.product.brand": "phoneworld",
            "ro.build.version.release": "14",
            "ro.build.version.sdk": "34",
            "ro.serialno": f"PW{self.world.seed:06d}",
            "ro.product.cpu.abi": "x86_64",
            "persist.sys.locale": lang,
            "ro.product.locale": lang,
            "sys.boot_completed": "1",
            "ro.secure": "1",
            "ro.debuggable": "0",
        }

    def settings_get(self, namespace: str, key: str) -> str | None:
        if (namespace, key) == ("secure", "default_input_method"):
            return self.ime.current
        if (namespace, key) == ("secure", "enabled_input_methods"):
            return ":".join(self.ime.enabled)
        return self.world.settings_get(namespace, key)

    def settings_put(self, namespace: str, key: str, value: str) -> None:
        if (namespace, key) == ("secure", "default_input_method"):
            self.ime.set(value)
            return
        self.world.settings_put(namespace, key, value)

    def broadcast(self, action: str, extras: dict[str, str]) -> None:
        """Deliver a broadcast. ADBKeyboard's receiver only exists while it is the current IME."""
        if action.startswith("ADB_") and self.ime.current != ADB_IME:
            log.info("broadcast %s: ADBKeyboard is not the current input method, nobody receives it", action)
            return
        if action == "ADB_INPUT_TEXT":
            self.world.input_text(extras.get("msg", ""))
        elif action == "ADB_INPUT_B64":
            try:
                text = base64.b64decode(extras.get("msg", "").encode("ascii")).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                log.warning("ADB_INPUT_B64 with a payload that is not base64 UTF-8")
                return
            self.world.input_text(text)
        elif action == "ADB_CLEAR_TEXT":
            self.world.clear_text()
        elif action == "ADB_INPUT_CODE":
            self.world.key(int(extras.get("code", "0")))
        elif action == "ADB_EDITOR_CODE":
            self.world.key(66)

    # --- dumpsys ---------------------------------------------------------------------------------------
    def dumpsys(self, service: str, args: list[str]) -> str | None:
        makers = {
            "window": self._dumpsys_window,
            "display": self._dumpsys_display,
            "power": self._dumpsys_power,
            "activity": self._dumpsys_activity,
            "input_method": self._dumpsys_input_method,
            "package": self._dumpsys_package,
            "battery": self._dumpsys_battery,
            "notification": self._dumpsys_notification,
            "alarm": self._dumpsys_alarm,
            "SurfaceFlinger": lambda a: "Display 0 (HWC display 0): port=0 pnpId=PWL displayName=\"Built-in Screen\"\n",
        }
        maker = makers.get(service)
        if maker is None:
            return None
        return maker(args)

    def _focus_component(self) -> tuple[str, str]:
        pkg, act = self.world.foreground
        full = pkg + act if act.startswith(".") else act
        return pkg, full

    def _dumpsys_window(self, args: list[str]) -> str:
        w = self.world
        pkg, act = self._focus_component()
        locked = bool(w.locked) or not w.screen_on
        secure = self.is_secure_window()
        token = _window_hash(pkg)
        flags = "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED DRAWS_SYSTEM_BAR_BACKGROUNDS"
        if secure and not locked:
            flags += " SECURE"
        if locked:
            focus = f"Window{{{token} u0 NotificationShade}}"
        else:
            focus = f"Window{{{token} u0 {pkg}/{act}}}"
        lines = [
            "WINDOW MANAGER WINDOWS (dumpsys window windows)",
            f"  Window #0 {focus}:",
            f"    mDisplayId=0 rootTaskId=1 mSession=Session{{1a2b u0a123}} mOwnerUid=10123 showForAllUsers=false package={pkg} appop=NONE",
            "    mAttrs={(0,0)(fillxfill) sim={adjust=pan forwardNavigation} ty=BASE_APPLICATION fmt=TRANSPARENT wanim=0x10302fe",
            f"      fl={flags}",
            "      pfl=NO_MOVE_ANIMATION USE_BLAST FIT_INSETS_CONTROLLED}",
            "    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false",
            "",
            f"  mCurrentFocus={focus}",
            f"  mFocusedApp=ActivityRecord{{{token} u0 {pkg}/{act} t12}}",
            "",
            "WINDOW MANAGER POLICY STATE (dumpsys window policy)",
            f"    mShowingLockscreen={str(locked).lower()} mShowingDream=false mDreamingLockscreen={str(locked).lower()}",
            f"    mKeyguardShowing={str(locked).lower()} mScreenOnEarly={str(w.screen_on).lower()} mScreenOnFully={str(w.screen_on).lower()}",
            "",
            "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
            f"  Display: mDisplayId=0 rotation=0 init={w.width}x{w.height} 420dpi base={w.width}x{w.height} 420dpi cur={w.width}x{w.height} app={w.width}x{w.height - 132}",
            # DisplayRotation's dump (read by clients for the screen orientation); the world is portrait only.
            "    mCurrentRotation=ROTATION_0  mLastOrientation=1",
            "    mRotation=0 mDeferredRotationPauseCount=0",
            "",
        ]
        return "\n".join(lines)

    def _dumpsys_display(self, args: list[str]) -> str:
        w = self.world
        return (
            "DISPLAY MANAGER (dumpsys display)\n"
            f"  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:0', "
            f"physicalPort=0, orientation=0, logicalFrame=Rect(0, 0 - {w.width}, {w.height}), physicalFrame=Rect(0, 0 - {w.width}, {w.height}), "
            f"deviceWidth={w.width}, deviceHeight={w.height}}}]\n"
            f"  mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", displayId 0, real {w.width} x {w.height}, rotation 0, density 420, "
            f"state {'ON' if w.screen_on else 'OFF'}}}\n"
        )

    def _dumpsys_power(self, args: list[str]) -> str:
        on = bool(self.world.screen_on)
        return (
            "POWER MANAGER (dumpsys power)\n"
            f"  mWakefulness={'Awake' if on else 'Asleep'}\n"
            f"  mWakefulnessChanging=false\n"
            f"  mHoldingDisplaySuspendBlocker={str(on).lower()}\n"
            f"Display Power: state={'ON' if on else 'OFF'}\n"
        )

    def _dumpsys_activity(self, args: list[str]) -> str:
        pkg, act = self._focus_component()
        token = _window_hash(pkg)
        if args[:1] == ["top"]:
            return f"TASK {pkg} id=12 userId=0\n  ACTIVITY {pkg}/{act} {token} pid=4321\n"
        return (
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
            f"  mResumedActivity: ActivityRecord{{{token} u0 {pkg}/{act} t12}}\n"
            f"  ResumedActivity: ActivityRecord{{{token} u0 {pkg}/{act} t12}}\n"
        )

    def _dumpsys_input_method(self, args: list[str]) -> str:
        shown = bool(getattr(self.world.sys, "keyboard_visible", False))
        return (
            f"  mCurMethodId={self.ime.current}\n"
            f"  mInputShown={str(shown).lower()}\n"
            f"  mEnabledInputMethods={','.join(self.ime.enabled)}\n"
        )

    def _dumpsys_package(self, args: list[str]) -> str:
        labels = self.world.installed_apps()
        wanted = [a for a in args if not a.startswith("-") and a != "packages"]
        out = ["Packages:"]
        for pkg in self.packages():
            if wanted and pkg not in wanted:
                continue
            activity = self.launcher_activity(pkg)
            out += [
                f"  Package [{pkg}] ({_window_hash(pkg)}):",
                "    userId=10123",
                f"    pkg=Package{{{_window_hash(pkg)} {pkg}}}",
                "    versionCode=34 minSdk=30 targetSdk=34",
                "    versionName=14",
                f"    nonLocalizedLabel={labels.get(pkg, 'null')}",
            ]
            if activity:
                out.append(f"    mainActivity={pkg}/{activity}")
        return "\n".join(out) + "\n"

    def _dumpsys_notification(self, args: list[str]) -> str:
        lines = ["Current Notification Manager state:", "  Notification List:"]
        for n in getattr(self.world, "notifications", []):
            lines += [
                f"    NotificationRecord(0x{n.id:08x}: pkg={n.package} user=UserHandle{{0}} id={n.id} tag=null importance=3)",
                f"      android.title=String ({n.title})",
                f"      android.text=String ({n.text})",
            ]
        return "\n".join(lines) + "\n"

    def _dumpsys_alarm(self, args: list[str]) -> str:
        lines = ["Current Alarm Manager state:", "  Pending alarm batches:"]
        clock = self.world.apps.get("com.android.deskclock")
        for alarm in getattr(getattr(clock, "state", None), "alarms", []):
            if getattr(alarm, "enabled", False):
                lines.append(
                    f"    RTC_WAKEUP #{alarm.id}: Alarm{{ type 0 origWhen {alarm.time} com.android.deskclock }}"
                    f" tag=*walarm*:com.android.deskclock.ALARM_ALERT label={getattr(alarm, 'label', '')}"
                )
        return "\n".join(lines) + "\n"

    def _dumpsys_battery(self, args: list[str]) -> str:
        level = getattr(self.world.sys, "battery", 80)
        return f"Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  level: {level}\n  scale: 100\n"

    # --- the scrcpy server ----------------------------------------------------------------------------
    def run_scrcpy_server(self, version: str, options: dict[str, str], io: ShellIO) -> int:
        from harness.phoneworld.scrcpy_server import ScrcpyServer  # PyAV loads only when mirroring

        server = ScrcpyServer(self, version=version, options=options)
        return server.run(io)
