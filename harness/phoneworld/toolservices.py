"""The simulated phone's answers to the shell paths harness.tools uses beyond `am start` resolution
(which harness.phoneworld.amstart owns): the Clock's alarm and timer intents with their extras, `cmd
package resolve-activity -a ACTION -d DATA`, and the `cmd`/`svc` services that switch settings — in the
output formats and with the failures of a real phone:

- `SET_ALARM --ei android.intent.extra.alarm.HOUR H --ei ...MINUTES M [--es ...MESSAGE L]` adds the alarm
  (DeskClock's HandleApiCalls; with SKIP_UI nothing else is shown); `SET_TIMER --ei ...LENGTH S` starts
  the timer;
- `cmd wifi set-wifi-enabled enabled|disabled` and `cmd wifi status`, `cmd bluetooth_manager
  enable|disable`, `cmd connectivity airplane-mode enable|disable`, `cmd notification set_dnd on|off`,
  `cmd uimode night yes|no`, `cmd location set-location-enabled true|false`; `svc wifi|bluetooth
  enable|disable` (svc prints its usage and exits 0 when it does not know a command, so callers read the
  state back);
- a service this phone's Android version lacks (`SimPhone.missing_services`, "svc wifi" for svc's): "cmd: Can't find service:
  NAME", exit 20, as `cmd` prints it.

The caller holds `phone.lock`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.phoneworld import amstart

if TYPE_CHECKING:
    from harness.phoneworld.adbservices import ShellIO
    from harness.phoneworld.host import PhoneHost

DESKCLOCK = "com.android.deskclock"
SETTINGS = "com.android.settings"
ALARM_EXTRA = "android.intent.extra.alarm."
SET_ALARM_PERMISSION = "com.android.alarm.permission.SET_ALARM"
SERVICES = frozenset({"wifi", "bluetooth_manager", "connectivity", "notification", "uimode", "location"})


def _int(intent: Any, name: str) -> int | None:
    raw = intent.extras.get(ALARM_EXTRA + name)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _set_alarm(world: Any, intent: Any) -> bool:
    """AlarmClock.ACTION_SET_ALARM: with an hour the alarm is added (SKIP_UI or not, DeskClock saves it);
    without one the alarm list opens."""
    if not world.launch(DESKCLOCK):
        return False
    app = world.apps[DESKCLOCK]
    hour = _int(intent, "HOUR")
    if hour is None or not 0 <= hour <= 23:
        return True
    minute = _int(intent, "MINUTES") or 0
    app.state.draft_time = f"{hour:02d}:{minute:02d}"
    app.state.draft_label = intent.extras.get(ALARM_EXTRA + "MESSAGE", "")
    app.add()
    return True


def _set_timer(world: Any, intent: Any) -> bool:
    """AlarmClock.ACTION_SET_TIMER: EXTRA_LENGTH seconds (1..86400) starts the timer."""
    if not world.launch(DESKCLOCK):
        return False
    app = world.apps[DESKCLOCK]
    seconds = _int(intent, "LENGTH")
    if seconds and 0 < seconds <= 86400:
        app.state.draft_minutes = f"{seconds / 60:g}"
        app.start_timer()
    return True


# The Clock answers its API intents with their extras (amstart.INTENT_FILTERS' own row only opens it);
# these rows go first so the package manager's pick is the same activity, now acting on the extras.
CLOCK_FILTERS = (
    amstart.IntentFilter((amstart.SET_ALARM,), DESKCLOCK, "com.android.deskclock.HandleApiCalls", _set_alarm),
    amstart.IntentFilter((amstart.SET_TIMER,), DESKCLOCK, "com.android.deskclock.HandleApiCalls", _set_timer),
)
for _row in reversed(CLOCK_FILTERS):
    if _row not in amstart.INTENT_FILTERS:
        amstart.INTENT_FILTERS.insert(0, _row)

# Permissions a handler requires of its caller (the shell user holds both on stock Android; a maker's
# build may not: SimPhone.denied_permissions makes `am start` refuse as Android does).
REQUIRED_PERMISSIONS = {
    amstart.SET_ALARM: SET_ALARM_PERMISSION,
    amstart.SET_TIMER: SET_ALARM_PERMISSION,
    amstart.CALL: "android.permission.CALL_PHONE",
}


def permission_denial(phone: PhoneHost, intent: Any, component: str) -> str | None:
    """What `am start` prints on stderr when the shell lacks the handler's permission; None when allowed."""
    needed = REQUIRED_PERMISSIONS.get(intent.action or "")
    if needed is None or needed not in phone.denied_permissions:
        return None
    shown = intent.short(with_flags=True).replace(" }", f" cmp={component} }}", 1) if component else intent.short()
    line = f"Permission Denial: starting Intent {shown} from null (pid=4242, uid=2000) requires {needed}"
    return f"Security exception: {line}\n\njava.lang.SecurityException: {line}\n"


def resolve_activity(phone: PhoneHost, args: list[str], io: ShellIO) -> int:
    """`cmd package resolve-activity [--brief] -a ACTION [-d DATA] [-c CAT]`: the component that answers."""
    brief = "--brief" in args
    try:
        intent = amstart.parse_am_intent([a for a in args if a not in ("--brief", "--components")])
    except ValueError as error:
        io.err(f"Error: {error}\n")
        return 255
    world = phone.world
    found = amstart.resolve(world, intent, set(world.installed_apps()))
    if found is None:
        io.out("No activity found\n")
        return 0
    component = f"{found.package}/{found.activity}"
    head = "priority=0 preferredOrder=0 match=0x208000 specificIndex=-1 isDefault=true"
    io.out(f"{head}\n{component}\n" if brief else f"Activity Resolver:\n  {component}\n")
    return 0


def _unknown(io: ShellIO, args: list[str]) -> int:
    io.err("Unknown command: " + " ".join(args) + "\n")
    return 255


def service(phone: PhoneHost, name: str, args: list[str], io: ShellIO) -> int | None:
    """`cmd NAME ARGS` for the services above; None when this command is not simulated (the caller answers)."""
    if name in SERVICES and name in phone.missing_services:
        io.err(f"cmd: Can't find service: {name}\n")
        return 20
    settings = phone.world.apps.get(SETTINGS)
    if settings is None:
        return None
    s = settings.state
    sub = args[0] if args else ""
    arg = args[1] if len(args) > 1 else ""
    if name == "wifi":
        if sub == "set-wifi-enabled" and arg in ("enabled", "disabled"):
            s.wifi = arg == "enabled"
        elif sub == "status":
            if s.wifi and s.wifi_network:
                io.out(f'Wifi is enabled\nWifi is connected to "{s.wifi_network}"\n')
            else:
                io.out("Wifi is enabled\nWifi is not connected\n" if s.wifi else "Wifi is disabled\n")
            return 0
        else:
            return _unknown(io, args)
    elif name == "bluetooth_manager":
        if sub not in ("enable", "disable"):
            return _unknown(io, args)
        s.bluetooth = sub == "enable"
    elif name == "connectivity":
        if sub != "airplane-mode" or arg not in ("enable", "disable"):
            return _unknown(io, args)
        if (arg == "enable") != s.airplane:
            settings.toggle_airplane()
    elif name == "notification":
        if sub != "set_dnd" or arg not in ("on", "off", "priority", "alarms", "none", "all"):
            return None
        s.dnd = arg not in ("off", "all")
    elif name == "uimode":
        if sub != "night" or arg not in ("yes", "no", "auto"):
            return _unknown(io, args)
        s.dark_mode = arg == "yes"
        io.out(f"Night mode: {arg}\n")
    elif name == "location":
        if sub != "set-location-enabled" or arg not in ("true", "false"):
            return _unknown(io, args)
        s.location = arg == "true"
    else:
        return None
    phone.world.refresh()
    return 0


def svc(phone: PhoneHost, args: list[str], io: ShellIO) -> int:
    """`svc wifi|bluetooth enable|disable` (svc bluetooth since Android 12); anything else prints usage."""
    settings = phone.world.apps.get(SETTINGS)
    what, sub = (list(args) + ["", ""])[:2]
    if settings is None or f"svc {what}" in phone.missing_services or what not in ("wifi", "bluetooth") \
            or sub not in ("enable", "disable"):
        io.out("Available commands:\n    help     Show information about the subcommands\n"
               "    power    Control the power manager\n    data     Control mobile data connectivity\n"
               "    wifi     Control the Wi-Fi manager\n    usb      Control Usb state\n")
        return 0
    if what == "wifi":
        settings.state.wifi = sub == "enable"
    else:
        settings.state.bluetooth = sub == "enable"
    phone.world.refresh()
    return 0
