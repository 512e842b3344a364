"""More of the phone's shell commands, answered as Android 14 answers them (harness.phoneworld.shell
registers them): `pm` (list packages with its filters, path, grant, revoke, uninstall, install,
install-existing, clear, enable, disable-user), `am stack list` / `am task lock`, `settings list`,
`content insert|update|delete`, `dumpsys input`, `md5sum`, `toybox`, `ip` and `ifconfig`.

Sources followed (AOSP, android-14): frameworks/base/services/core/java/com/android/server/pm/
PackageManagerShellCommand.java (pm output and its `Failure [...]` / `Exception occurred while executing`
error forms), .../server/am/ActivityManagerShellCommand.java (`am stack list` prints each
ActivityTaskManager.RootTaskInfo, `am task lock` answers "Activity manager is [not ]in lockTaskMode"),
frameworks/base/packages/SettingsProvider/.../SettingsService.java (`settings list`),
frameworks/base/cmds/content/src/com/android/commands/content/Content.java (`--bind name:type:value`),
toybox's md5sum/ifconfig and iproute2's `ip addr` output. Each function returns the exit status.

The caller (Shell) holds no lock; every world access here takes `phone.lock`.
"""

from __future__ import annotations

import hashlib
import io as iolib
import random
import re
import zipfile
from typing import TYPE_CHECKING

from harness.phoneworld.records import Permission, SensitiveKind
from harness.phoneworld.vfs import FsError

if TYPE_CHECKING:
    from harness.phoneworld.adbservices import ShellIO
    from harness.phoneworld.host import PhoneHost

# Packages a user installed (`pm list packages -3`); everything else on the phone came with its system image.
THIRD_PARTY_PREFIXES = ("com.phoneworld.", "com.android.adbkeyboard")
RUNTIME_PERMISSIONS = {p.value for p in Permission} | {
    "android.permission.READ_EXTERNAL_STORAGE", "android.permission.WRITE_EXTERNAL_STORAGE",
    "android.permission.ACCESS_COARSE_LOCATION", "android.permission.CALL_PHONE", "android.permission.READ_SMS",
    "android.permission.SEND_SMS", "android.permission.READ_CALENDAR", "android.permission.WRITE_CALENDAR",
    "android.permission.READ_CALL_LOG", "android.permission.WRITE_CONTACTS", "android.permission.READ_MEDIA_VIDEO",
}
INSTALL_PERMISSIONS = {"android.permission.INTERNET", "android.permission.VIBRATE", "android.permission.WAKE_LOCK",
                       "android.permission.ACCESS_NETWORK_STATE", "android.permission.RECEIVE_BOOT_COMPLETED"}
TOYBOX_APPLETS = ["[", "acpi", "base64", "basename", "blkid", "blockdev", "cal", "cat", "chattr", "chcon", "chgrp", "chmod", "chown", "chroot", "chrt", "cksum", "clear", "cmp", "comm", "cp", "cpio", "cut", "date", "dd", "devmem", "df", "diff", "dirname", "dmesg", "dos2unix", "du", "echo", "egrep", "env", "expand", "expr", "fallocate", "false", "fgrep", "file", "find", "flock", "fmt", "free", "freeramdisk", "fsfreeze", "fsync", "getconf", "getenforce", "getfattr", "grep", "groups", "gunzip", "gzip", "head", "hostname", "hwclock", "i2cdetect", "i2cdump", "i2cget", "i2cset", "iconv", "id", "ifconfig", "inotifyd", "insmod", "install", "ionice", "iorenice", "iotop", "kill", "killall", "ln", "load_policy", "log", "logname", "losetup", "ls", "lsattr", "lsmod", "lsof", "lspci", "lsusb", "makedevs", "md5sum", "microcom", "mkdir", "mkfifo", "mknod", "mkswap", "mktemp", "modinfo", "modprobe", "more", "mount", "mountpoint", "mv", "nbd-client", "nc", "netcat", "netstat", "nice", "nl", "nohup", "nproc", "nsenter", "od", "paste", "patch", "pgrep", "pidof", "ping", "ping6", "pivot_root", "pkill", "pmap", "printenv", "printf", "prlimit", "ps", "pwd", "pwdx", "readelf", "readlink", "realpath", "renice", "restorecon", "rev", "rfkill", "rm", "rmdir", "rmmod", "rtcwake", "runcon", "sed", "sendevent", "seq", "setenforce", "setfattr", "setsid", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "sleep", "sort", "split", "stat", "strings", "stty", "swapoff", "swapon", "sync", "sysctl", "tac", "tail", "tar", "taskset", "tee", "test", "time", "timeout", "top", "touch", "tr", "traceroute", "traceroute6", "true", "truncate", "tty", "tunctl", "ulimit", "umount", "uname", "uniq", "unix2dos", "unlink", "unshare", "uptime", "usleep", "uudecode", "uuencode", "uuidgen", "vconfig", "vi", "vmstat", "watch", "wc", "which", "whoami", "xargs", "xxd", "yes", "zcat"]
TOYBOX_VERSION = "0.8.9-android"


def _exception(io: ShellIO, command: str, exc: str) -> int:
    """How `cmd`-based tools report a thrown exception (ShellCommand.exec): text on stderr, status 255."""
    io.err(f"Exception occurred while executing '{command}':\n{exc}\n")
    return 255


class SysCommands:
    """Per-phone state the package manager and activity manager keep beyond the World."""

    def __init__(self, phone: PhoneHost):
        self.phone = phone
        self.removed: set[str] = set()  # `pm uninstall` (for user 0): gone from lists, launches fail
        self.disabled: set[str] = set()  # `pm disable-user`
        self.lock_task: str | None = None  # the package pinned by `am task lock`
        self._task_ids: dict[str, int] = {}
        self._sessions = 0

    # --- packages -----------------------------------------------------------------------------------------
    def packages(self) -> list[str]:
        with self.phone.lock:
            return [p for p in self.phone.packages() if p not in self.removed]

    def installed(self, package: str) -> bool:
        return package in self.packages()

    def launchable(self, package: str) -> bool:
        return package not in self.removed and package not in self.disabled

    @staticmethod
    def is_system(package: str) -> bool:
        return not package.startswith(THIRD_PARTY_PREFIXES)

    def apk_path(self, package: str) -> str:
        if self.is_system(package):
            name = package.rsplit(".", 1)[-1].capitalize()
            return f"/system/{'priv-app' if package in ('com.android.settings', 'com.android.launcher3', 'com.android.systemui') else 'app'}/{name}/{name}.apk"
        return f"/data/app/~~{_token(package, 'a')}==/{package}-{_token(package, 'b')}==/base.apk"

    def pm(self, args: list[str], io: ShellIO) -> int | None:
        """`pm SUB ...`; None when SUB is not one of these (the caller answers it)."""
        sub, rest = (args[0], args[1:]) if args else ("", [])
        handler = {
            "list": self._pm_list,
            "path": self._pm_path,
            "grant": self._pm_grant,
            "revoke": self._pm_grant,
            "uninstall": self._pm_uninstall,
            "install": self._pm_install,
            "install-existing": self._pm_install_existing,
            "clear": self._pm_clear,
            "enable": self._pm_enable,
            "disable-user": self._pm_enable,
            "disable": self._pm_enable,
        }.get(sub)
        if handler is None:
            return None
        return handler(sub, rest, io)

    def _pm_list(self, sub: str, rest: list[str], io: ShellIO) -> int:
        if rest[:1] == ["features"]:
            io.out("".join(f"feature:android.hardware.{f}\n" for f in (
                "touchscreen", "touchscreen.multitouch", "wifi", "telephony", "camera", "screen.portrait")))
            return 0
        if rest[:1] == ["users"]:
            io.out("Users:\n\tUserInfo{0:Owner:c13} running\n")
            return 0
        if rest[:1] != ["packages"]:
            # PackageManagerShellCommand.runList: any other list type is refused.
            io.err(f"Error: unknown list type '{rest[0] if rest else ''}'\n")
            return 255
        opts = {c for a in rest[1:] if a.startswith("-") and not a.startswith("--") for c in a[1:]}
        words = [a for a in rest[1:] if not a.startswith("-")]
        if "--user" in rest and words:
            words = words[1:]  # the user id
        filt = words[0] if words else ""
        pkgs = self.packages() + (sorted(self.removed) if "u" in opts else [])
        for pkg in sorted(set(pkgs)):
            if filt and filt not in pkg:
                continue
            if "3" in opts and self.is_system(pkg) or "s" in opts and not self.is_system(pkg):
                continue
            if "d" in opts and pkg not in self.disabled or "e" in opts and pkg in self.disabled:
                continue
            line = "package:" + (self.apk_path(pkg) + "=" if "f" in opts else "") + pkg
            if "i" in opts:
                line += f"  installer={'null' if self.is_system(pkg) else 'com.android.vending'}"
            if "U" in opts:
                line += f" uid:{10100 + sorted(self.phone.packages()).index(pkg)}" if pkg in self.phone.packages() else ""
            io.out(line + "\n")
        return 0

    def _pm_path(self, sub: str, rest: list[str], io: ShellIO) -> int:
        pkg = next((a for a in rest if not a.startswith("-")), "")
        if not self.installed(pkg):
            return 1  # prints nothing, as Android does for an unknown package
        io.out(f"package:{self.apk_path(pkg)}\n")
        return 0

    def _pm_grant(self, sub: str, rest: list[str], io: ShellIO) -> int:
        words = [a for a in rest if not a.startswith("-")]
        if "--user" in rest:
            words = words[1:]
        if len(words) < 2:
            return _exception(io, sub, "java.lang.IllegalArgumentException: no permission specified"
                              if words else "java.lang.IllegalArgumentException: no package specified")
        pkg, perm = words[0], words[1]
        if not self.installed(pkg):
            return _exception(io, sub, f"java.lang.IllegalArgumentException: Unknown package: {pkg}")
        if perm in INSTALL_PERMISSIONS:
            return _exception(io, sub, f"java.lang.SecurityException: Permission {perm} requested by {pkg} "
                              "is not a changeable permission type")
        if perm not in RUNTIME_PERMISSIONS:
            return _exception(io, sub, f"java.lang.IllegalArgumentException: Unknown permission: {perm}")
        try:
            known = Permission(perm)
        except ValueError:
            return 0  # a runtime permission none of the world's apps asks for: granted, nothing to see
        with self.phone.lock:
            world = self.phone.world
            key = (pkg, known)
            if sub == "grant" and key not in world.granted:
                world.granted.add(key)
                world.denied.discard(key)
                world.record(SensitiveKind.PERMISSION_GRANTED, pkg, target=perm)
            elif sub == "revoke":
                world.granted.discard(key)
            world.refresh()
        return 0

    def _pm_uninstall(self, sub: str, rest: list[str], io: ShellIO) -> int:
        for_user = "--user" in rest
        words = [a for a in rest if not a.startswith("-")]
        if for_user:
            words = words[1:]
        pkg = words[0] if words else ""
        if not pkg:
            io.err("Error: package name not specified\n")
            return 1
        if not self.installed(pkg) or (self.is_system(pkg) and not for_user):
            # A system app can only be removed for a user; an unknown one cannot be removed at all.
            io.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
            return 1
        with self.phone.lock:
            self.removed.add(pkg)
            self.phone.world.force_stop(pkg)
        io.out("Success\n")
        return 0

    def _pm_install_existing(self, sub: str, rest: list[str], io: ShellIO) -> int:
        pkg = next((a for a in rest if not a.startswith("-") and not a.isdigit()), "")
        if pkg not in self.removed:
            if self.installed(pkg):
                io.out(f"Package {pkg} installed for user: 0\n")
                return 0
            io.out(f"Failure [INSTALL_FAILED_INVALID_URI: Package {pkg} doesn't exist]\n")  # sic, as Android
            return 1
        self.removed.discard(pkg)
        io.out(f"Package {pkg} installed for user: 0\n")
        return 0

    def _pm_install(self, sub: str, rest: list[str], io: ShellIO, data: bytes | None = None) -> int:
        """The phone parses the APK and refuses what it cannot verify. The simulated phone cannot run real
        apps, so every install ends in the failure a real phone gives that file (see the conformance docs)."""
        if data is None:
            paths = [a for a in rest if not a.startswith("-") and not a.isdigit()]
            if not paths:
                return _exception(io, "install", "java.lang.IllegalArgumentException: Error: must either specify "
                                  "a package size or an APK file")
            try:
                data = self.phone.fs.read(paths[-1])
            except FsError:
                return _exception(io, "install", f"java.lang.IllegalArgumentException: Error: Can't open file: {paths[-1]}")
        self._sessions += 1
        staged = f"/data/app/vmdl{1042 + self._sessions}.tmp/base.apk"
        try:
            with zipfile.ZipFile(iolib.BytesIO(data)) as apk:
                has_manifest = "AndroidManifest.xml" in apk.namelist()
                signed = any(n.startswith("META-INF/") and n.endswith((".RSA", ".EC", ".DSA")) for n in apk.namelist())
        except zipfile.BadZipFile:
            has_manifest = signed = False
        if not has_manifest:
            io.out(f"Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse {staged}: Failed to load asset path {staged}]\n")
        elif not signed:
            io.out(f"Failure [INSTALL_PARSE_FAILED_NO_CERTIFICATES: Failed collecting certificates for {staged}]\n")
        else:
            io.out(f"Failure [INSTALL_FAILED_INVALID_APK: Failed to extract native libraries, res=-113 ({staged})]\n")
        return 1

    def stream_install(self, args: list[str], io: ShellIO, read_stdin) -> int:
        """`cmd package install -S SIZE` (what `adb install` runs): the APK comes on stdin."""
        size = int(args[args.index("-S") + 1]) if "-S" in args else -1
        data = bytearray()
        while size < 0 or len(data) < size:
            chunk = read_stdin(10.0)
            if not chunk:
                break
            data += chunk
        return self._pm_install("install", [], io, bytes(data))

    def _pm_clear(self, sub: str, rest: list[str], io: ShellIO) -> int:
        pkg = next((a for a in rest if not a.startswith("-") and not a.isdigit()), "")
        with self.phone.lock:
            world = self.phone.world
            app = world.apps.get(pkg)
            if app is None or not self.installed(pkg):
                io.err("Failed\n")
                return 1
            world.force_stop(pkg)
            # The app's data as it was when first installed (the world's seed state).
            app.reset(random.Random(f"{world.seed}:{pkg}"))
            world.granted = {k for k in world.granted if k[0] != pkg}
            world.denied = {k for k in world.denied if k[0] != pkg}
            world.refresh()
        io.out("Success\n")
        return 0

    def _pm_enable(self, sub: str, rest: list[str], io: ShellIO) -> int:
        words = [a for a in rest if not a.startswith("-")]
        if "--user" in rest:
            words = words[1:]
        pkg = words[0] if words else ""
        if not self.installed(pkg):
            return _exception(io, sub, f"java.lang.IllegalArgumentException: Unknown package: {pkg}")
        if sub == "disable" and self.is_system(pkg):
            return _exception(io, sub, f"java.lang.SecurityException: Shell cannot change component state for {pkg}/null to 2")
        if sub == "enable":
            self.disabled.discard(pkg)
            state = "enabled"
        else:
            self.disabled.add(pkg)
            with self.phone.lock:
                self.phone.world.force_stop(pkg)
            state = "disabled-user" if sub == "disable-user" else "disabled"
        io.out(f"Package {pkg} new state: {state}\n")
        return 0

    # --- activity manager ----------------------------------------------------------------------------------
    def task_id(self, package: str) -> int:
        if package not in self._task_ids:
            self._task_ids[package] = 1 if package == "com.android.launcher3" else 100 + len(self._task_ids)
        return self._task_ids[package]

    def am_stack(self, args: list[str], io: ShellIO) -> int:
        if args[:1] != ["list"]:
            io.err(f"Error: unknown command '{args[0] if args else ''}'\n")
            return 255
        with self.phone.lock:
            w = self.phone.world
            fg_pkg, fg_act = w.foreground
            tasks = [p for p in reversed(w.recents) if p in w.stacks]
            home = ("com.android.launcher3", "com.android.launcher3.Launcher")
            width, height = w.width, w.height
            rows = []
            for pkg in tasks:
                act = w.apps[pkg].activity(w.route_of(pkg))
                rows.append((pkg, act if not act.startswith(".") else pkg + act, pkg == fg_pkg))
            rows.append((home[0], home[1], fg_pkg == home[0]))
        config = f"{{1.0 ?mcc?mnc [en_US] ?layoutDir sw411dp w411dp h{height * 160 // 420}dp 420dpi nrml long port finger -keyb/v/h -nav/h winConfig={{ mBounds=Rect(0, 0 - {width}, {height}) mAppBounds=Rect(0, 96 - {width}, {height - 132}) mWindowingMode=fullscreen mActivityType=standard}} s.1}}"
        for pkg, act, visible in rows:
            tid = self.task_id(pkg)
            io.out(f"RootTask id={tid} bounds=[0,0][{width},{height}] displayId=0 userId=0\n")
            io.out(f" configuration={config}\n")
            io.out(f"  taskId={tid}: {pkg}/{act} bounds=[0,0][{width},{height}] userId=0 visible={str(visible).lower()} "
                   f"topActivity=ComponentInfo{{{pkg}/{act}}}\n")
        return 0

    def am_task(self, args: list[str], io: ShellIO) -> int:
        if args[:1] != ["lock"] or len(args) < 2:
            io.err("Error: unknown command '" + (args[0] if args else "") + "'\n")
            return 255
        if args[1] == "stop":
            self.lock_task = None
        else:
            wanted = int(args[1])
            package = next((p for p, t in self._task_ids.items() if t == wanted), None)
            with self.phone.lock:
                running = package is not None and package in self.phone.world.stacks
            if running:
                self.lock_task = package
            else:
                return _exception(io, "task", "java.lang.IllegalArgumentException: Invalid task, not in foreground")
        io.out(f"Activity manager is {'' if self.lock_task else 'not '}in lockTaskMode\n")
        return 0

    def key_blocked(self, code: int) -> bool:
        """Screen pinning (`am task lock`) ignores Home and Recents, as a pinned task does."""
        return self.lock_task is not None and code in (3, 187)

    # --- settings and content ---------------------------------------------------------------------------
    SETTING_KEYS = {
        "global": ("wifi_on", "bluetooth_on", "airplane_mode_on", "adb_enabled", "development_settings_enabled",
                   "stay_on_while_plugged_in", "window_animation_scale", "transition_animation_scale",
                   "animator_duration_scale", "auto_time"),
        "system": ("screen_brightness", "screen_brightness_mode", "font_scale", "system_locales",
                   "accelerometer_rotation", "user_rotation", "screen_off_timeout"),
        "secure": ("ui_night_mode", "location_mode", "lockscreen.disabled", "default_input_method",
                   "enabled_input_methods", "android_id"),
    }
    SETTING_DEFAULTS = {
        ("global", "adb_enabled"): "1", ("global", "development_settings_enabled"): "1",
        ("global", "stay_on_while_plugged_in"): "0", ("global", "window_animation_scale"): "1.0",
        ("global", "transition_animation_scale"): "1.0", ("global", "animator_duration_scale"): "1.0",
        ("global", "auto_time"): "1", ("system", "accelerometer_rotation"): "0", ("system", "user_rotation"): "0",
        ("system", "screen_off_timeout"): "60000", ("secure", "android_id"): "",
    }

    def setting(self, ns: str, key: str) -> str | None:
        with self.phone.lock:
            value = self.phone.settings_get(ns, key)
            if value is None:
                value = self.SETTING_DEFAULTS.get((ns, key))
                if (ns, key) == ("secure", "android_id"):
                    value = f"{hashlib.md5(str(self.phone.world.seed).encode()).hexdigest()[:16]}"
        return value

    def settings_list(self, ns: str, io: ShellIO) -> int:
        if ns not in self.SETTING_KEYS:
            io.err(f"Invalid namespace '{ns}'\n")
            return 255
        with self.phone.lock:
            extra = {k for (n, k) in self.phone.world.settings_extra if n == ns}
        for key in sorted(set(self.SETTING_KEYS[ns]) | extra):
            value = self.setting(ns, key)
            if value is not None and value != "":
                io.out(f"{key}={value}\n")
        return 0

    def content_write(self, args: list[str], io: ShellIO) -> int:
        """`content insert|update|delete --uri URI [--bind name:type:value ...] [--where W]`."""
        sub = args[0]
        uri = where = None
        binds: dict[str, str] = {}
        it = iter(args[1:])
        for a in it:
            if a == "--uri":
                uri = next(it, None)
            elif a == "--bind":
                spec = next(it, "") or ""
                name, _, rest = spec.partition(":")
                kind, _, value = rest.partition(":")
                if kind not in ("b", "s", "i", "l", "f", "d", "n") or not name:
                    io.err(f"Error: Invalid binding type: {spec}\n")
                    return 1
                binds[name] = "" if kind == "n" else value
            elif a == "--where":
                where = next(it, None)
            elif a == "--user" or a == "--extra":
                next(it, None)
            else:
                io.err(f"Error: Unsupported argument: {a}\n")
                return 1
        if not uri:
            io.err("Error: Content provider URI not specified\n")
            return 1
        m = re.fullmatch(r"content://settings/(system|secure|global)/?([^/]*)", uri)
        if m is None:
            authority = uri.removeprefix("content://").split("/")[0]
            known = {"sms": ("com.android.providers.telephony.SmsProvider", "android.permission.WRITE_SMS"),
                     "call_log": ("com.android.providers.contacts.CallLogProvider", "android.permission.WRITE_CALL_LOG"),
                     "com.android.contacts": ("com.android.providers.contacts.ContactsProvider2", "android.permission.WRITE_CONTACTS"),
                     "com.android.calendar": ("com.android.providers.calendar.CalendarProvider2", "android.permission.WRITE_CALENDAR")}
            if authority in known:
                cls, perm = known[authority]
                io.err(f"Error while accessing provider:{authority}\njava.lang.SecurityException: Permission Denial: "
                       f"writing {cls} uri {uri} from pid=0, uid=2000 requires {perm}, or grantUriPermission()\n")
            else:
                io.err(f"Error while accessing provider:{authority}\njava.lang.IllegalStateException: "
                       f"Could not find provider: {authority}\n")
            return 1
        ns, name_in_uri = m.group(1), m.group(2)
        names: list[str]
        if name_in_uri:
            names = [name_in_uri]
        elif where:
            wm = re.fullmatch(r"\s*name\s*=\s*'((?:[^']|'')*)'\s*", where)
            if wm is None:
                io.err("java.lang.IllegalArgumentException: Supported SQL:\n  uri content://some.authority/table\n"
                       "  selection name=?\n  selectionArgs: [name]\n")
                return 1
            names = [wm.group(1).replace("''", "'")]
        else:
            names = [binds.get("name", "")]
        with self.phone.lock:
            for name in names:
                if not name:
                    io.err("java.lang.IllegalArgumentException: Invalid value: null\n")
                    return 1
                if sub == "delete":
                    self.phone.world.settings_extra.pop((ns, name), None)
                    if self.phone.world.settings_get(ns, name) is not None:
                        self.phone.settings_put(ns, name, "")
                else:
                    self.phone.settings_put(ns, name, binds.get("value", ""))
        return 0

    # --- dumpsys input -------------------------------------------------------------------------------------
    def dumpsys_input(self) -> str:
        with self.phone.lock:
            w = self.phone.world
            pkg, act = w.foreground
            width, height = w.width, w.height
        full = act if not act.startswith(".") else pkg + act
        return (
            "INPUT MANAGER (dumpsys input)\n\n"
            "Input Manager Service (Java) State:\n  Pointer Speed: 0\n\n"
            "Event Hub State:\n  BuiltInKeyboardId: -2\n  Devices:\n"
            "    -1: Virtual\n      Classes: KEYBOARD | ALPHAKEY\n      Path: <virtual>\n"
            "    1: gpio-keys\n      Classes: KEYBOARD\n      Path: /dev/input/event1\n"
            "    2: phoneworld_touchscreen\n      Classes: TOUCH | TOUCH_MT\n      Path: /dev/input/event2\n\n"
            "Input Reader State (Nums of device: 3):\n"
            "  Device 2: phoneworld_touchscreen\n    Generation: 4\n    IsExternal: false\n"
            "    Sources: TOUCHSCREEN\n    KeyboardType: None\n"
            "    Touch Input Mapper (mode - DIRECT):\n"
            f"      Viewport INTERNAL: displayId=0, uniqueId=local:0, port=0, orientation=0, "
            f"logicalFrame=[0, 0, {width}, {height}], physicalFrame=[0, 0, {width}, {height}], "
            f"deviceSize=[{width}, {height}], isActive=[1]\n"
            "      SurfaceOrientation: 0\n"
            f"      RawTouchAxes:\n        X: min=0, max={width - 1}, flat=0, fuzz=0, resolution=0\n"
            f"        Y: min=0, max={height - 1}, flat=0, fuzz=0, resolution=0\n"
            "        TouchMajor: min=0, max=255, flat=0, fuzz=0, resolution=0\n\n"
            "Input Dispatcher State:\n  DispatchEnabled: true\n  DispatchFrozen: false\n"
            f"  FocusedApplications:\n    displayId=0, name='ActivityRecord{{{_token(pkg, 'f')[:7]} u0 {pkg}/{full} t{self.task_id(pkg)}}}', "
            "dispatchingTimeout=5000ms\n"
            f"  FocusedWindows:\n    displayId=0, name='{_token(pkg, 'w')[:7]} {pkg}/{full}'\n"
        )

    # --- files and network ---------------------------------------------------------------------------------
    def md5sum(self, args: list[str], io: ShellIO, stdin: bytes | None, algo: str = "md5") -> int:
        files = [a for a in args if not a.startswith("-") or a == "-"]
        status = 0
        if not files:
            io.out(f"{hashlib.new(algo, stdin or b'').hexdigest()}  -\n")
            return 0
        for path in files:
            try:
                data = stdin or b"" if path == "-" else self.phone.fs.read(path)
            except FsError:
                info = self.phone.fs.stat(path)
                io.err(f"{algo}sum: {path}: {'Is a directory' if info and info.is_dir else 'No such file or directory'}\n")
                status = 1
                continue
            io.out(f"{hashlib.new(algo, data).hexdigest()}  {path}\n")
        return status

    def _net(self) -> tuple[bool, str, str]:
        with self.phone.lock:
            st = self.phone.world.apps["com.android.settings"].state
            up = bool(st.wifi) and not st.airplane
            seed = self.phone.world.seed
        return up, f"192.168.1.{100 + seed % 100}", f"02:00:00:{seed % 256:02x}:{(seed >> 8) % 256:02x}:5a"

    def ip(self, args: list[str], io: ShellIO) -> int:
        words = [a for a in args if not a.startswith("-")]
        obj = words[0] if words else ""
        up, addr, mac = self._net()
        if obj in ("a", "addr", "address"):
            dev = words[words.index("dev") + 1] if "dev" in words else (words[2] if words[1:2] == ["show"] and len(words) > 2 else "")
            blocks = {
                "lo": "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n"
                      "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
                      "    inet 127.0.0.1/8 scope host lo\n       valid_lft forever preferred_lft forever\n",
                "wlan0": f"3: wlan0: <{'BROADCAST,MULTICAST,UP,LOWER_UP' if up else 'BROADCAST,MULTICAST'}> mtu 1500 qdisc mq "
                         f"state {'UP' if up else 'DOWN'} group default qlen 3000\n    link/ether {mac} brd ff:ff:ff:ff:ff:ff\n"
                         + (f"    inet {addr}/24 brd 192.168.1.255 scope global wlan0\n"
                            "       valid_lft forever preferred_lft forever\n" if up else ""),
            }
            if dev and dev not in blocks:
                io.err(f'Device "{dev}" does not exist.\n')
                return 1
            io.out("".join(v for k, v in blocks.items() if not dev or k == dev))
            return 0
        if obj in ("r", "route"):
            if up:
                io.out(f"192.168.1.0/24 dev wlan0 proto kernel scope link src {addr}\n")
            return 0
        if obj in ("l", "link"):
            io.out("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n"
                   "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
                   f"3: wlan0: <BROADCAST,MULTICAST{',UP,LOWER_UP' if up else ''}> mtu 1500 qdisc mq state "
                   f"{'UP' if up else 'DOWN'} mode DORMANT group default qlen 3000\n    link/ether {mac} brd ff:ff:ff:ff:ff:ff\n")
            return 0
        io.err(f'Object "{obj}" is unknown, try "ip help".\n')
        return 1

    def ifconfig(self, args: list[str], io: ShellIO) -> int:
        up, addr, mac = self._net()
        blocks = {
            "lo": "lo        Link encap:Local Loopback\n          inet addr:127.0.0.1  Mask:255.0.0.0\n"
                  "          UP LOOPBACK RUNNING  MTU:65536  Metric:1\n\n",
            "wlan0": f"wlan0     Link encap:Ethernet  HWaddr {mac}\n"
                     + (f"          inet addr:{addr}  Bcast:192.168.1.255  Mask:255.255.255.0\n"
                        "          UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1\n\n" if up else
                        "          BROADCAST MULTICAST  MTU:1500  Metric:1\n\n"),
        }
        dev = next((a for a in args if not a.startswith("-")), "")
        if dev and dev not in blocks:
            io.err(f"ifconfig: {dev}: No such device\n")  # toybox's perror_exit form
            return 1
        io.out("".join(v for k, v in blocks.items() if (k == dev if dev else (k == "lo" or up or "-a" in args))))
        return 0

    def toybox(self, run_applet, args: list[str], io: ShellIO) -> int:
        if not args:
            io.out(" ".join(TOYBOX_APPLETS) + "\n")
            return 0
        if args[0] == "--version":
            io.out(f"toybox {TOYBOX_VERSION}\n")
            return 0
        if args[0] == "--long":
            io.out(" ".join(f"usr/bin/{a}" for a in TOYBOX_APPLETS) + "\n")
            return 0
        if args[0] not in TOYBOX_APPLETS:
            io.err(f"toybox: Unknown command {args[0]} (see \"toybox --help\")\n")
            return 1
        return run_applet(args, io)


def _token(package: str, salt: str) -> str:
    return hashlib.sha1(f"{salt}:{package}".encode()).hexdigest()[:22]


# --- key names (AOSP frameworks/native/include/android/keycodes.h; KeyEvent.keyCodeFromString) ----------
_KEY_NAMES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "STAR": 17, "POUND": 18, "DPAD_UP": 19, "DPAD_DOWN": 20,
    "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26,
    "CAMERA": 27, "CLEAR": 28, "COMMA": 55, "PERIOD": 56, "ALT_LEFT": 57, "ALT_RIGHT": 58, "SHIFT_LEFT": 59,
    "SHIFT_RIGHT": 60, "TAB": 61, "SPACE": 62, "SYM": 63, "EXPLORER": 64, "ENVELOPE": 65, "ENTER": 66, "DEL": 67,
    "GRAVE": 68, "MINUS": 69, "EQUALS": 70, "LEFT_BRACKET": 71, "RIGHT_BRACKET": 72, "BACKSLASH": 73,
    "SEMICOLON": 74, "APOSTROPHE": 75, "SLASH": 76, "AT": 77, "PLUS": 81, "MENU": 82, "NOTIFICATION": 83,
    "SEARCH": 84, "MEDIA_PLAY_PAUSE": 85, "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111, "FORWARD_DEL": 112,
    "CTRL_LEFT": 113, "CTRL_RIGHT": 114, "CAPS_LOCK": 115, "META_LEFT": 117, "META_RIGHT": 118, "FUNCTION": 119,
    "MOVE_HOME": 122, "MOVE_END": 123, "INSERT": 124, "VOLUME_MUTE": 164, "APP_SWITCH": 187, "SLEEP": 223,
    "WAKEUP": 224, "ASSIST": 219, "VOICE_ASSIST": 231, "ALL_APPS": 284, "SCREENSHOT": 120,
}
_KEY_NAMES |= {chr(c): 29 + c - ord("A") for c in range(ord("A"), ord("Z") + 1)}
_KEY_NAMES |= {str(d): 7 + d for d in range(10)}
_KEY_NAMES |= {f"F{n}": 130 + n for n in range(1, 13)}
MODIFIER_KEYCODES = frozenset({57, 58, 59, 60, 113, 114, 117, 118, 119, 63})


def android_keycode(name: str) -> int | None:
    """`KEYCODE_A`, `A` or `29` -> 29; None for a name Android does not know. A number is a key code
    first (`4` is BACK; `KEYCODE_4` is the digit key), as in KeyEvent.keyCodeFromString."""
    if name.isdigit():
        return int(name) if 0 < int(name) <= 316 else None
    return _KEY_NAMES.get(name.removeprefix("KEYCODE_"))
