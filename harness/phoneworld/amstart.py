"""Implicit intents for `am start`: which app of the simulated phone answers an action/category/data, and
what it does with it.

`parse_am_intent(args)` reads the intent options `am start` takes (AOSP
frameworks/base/core/java/android/content/Intent.java `parseCommandArgs`: -a -d -t -c -n -p -f and the
--es/--ez/--ei/--el/--ef/--eu/--esa extras). `resolve(phone, intent)` walks `INTENT_FILTERS`, a table in
the order the package manager would pick a default handler, and returns the first filter that matches;
`IntentFilter.open(world, intent)` then acts it out on the World.

To answer another intent, append an `IntentFilter` (actions, schemes, categories, the package and
activity it resolves to, and an `open` function that navigates the app); nothing else needs to change.

What `am start` prints is `Intent.toShortString` with `Uri.toSafeString` for the data (AOSP
core/java/android/net/Uri.java): phone numbers and addresses come out as `tel:xxxxxxx`, web addresses as
`https://host/...`.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.phoneworld.records import Route

if TYPE_CHECKING:
    from harness.phoneworld.world import World

log = logging.getLogger(__name__)

MAIN = "android.intent.action.MAIN"
VIEW = "android.intent.action.VIEW"
DIAL = "android.intent.action.DIAL"
CALL = "android.intent.action.CALL"
SENDTO = "android.intent.action.SENDTO"
SEND = "android.intent.action.SEND"
SET_ALARM = "android.intent.action.SET_ALARM"  # AlarmClock.ACTION_SET_ALARM
SHOW_ALARMS = "android.intent.action.SHOW_ALARMS"
SET_TIMER = "android.intent.action.SET_TIMER"
CAT_HOME = "android.intent.category.HOME"
CAT_LAUNCHER = "android.intent.category.LAUNCHER"
CAT_DEFAULT = "android.intent.category.DEFAULT"
CAT_BROWSABLE = "android.intent.category.BROWSABLE"
FLAG_ACTIVITY_NEW_TASK = 0x10000000

_EXTRA_OPTS = {"--es", "--esn", "--ez", "--ei", "--el", "--ef", "--ed", "--eu", "--ecn", "--eia", "--eial",
               "--ela", "--elal", "--efa", "--efal", "--esa", "--esal", "--e"}
_FLAG_OPTS = {"-W", "-S", "-R", "--activity-clear-task", "--activity-new-task", "--activity-clear-top",
              "--activity-single-top", "--activity-no-history", "--activity-reorder-to-front",
              "--activity-exclude-from-recents", "--activity-brought-to-front", "--grant-read-uri-permission",
              "--grant-write-uri-permission", "--receiver-foreground", "--include-stopped-packages",
              "--exclude-stopped-packages", "--debug-log-resolution", "-D", "-N", "--track-allocation"}
_VALUE_OPTS = {"--user", "--display", "--windowingMode", "--activityType", "--task", "--start-profiler",
               "-P", "--sampling", "--attach-agent", "--attach-agent-bind", "--streaming", "-e"}


@dataclass
class Intent:
    action: str | None = None
    data: str | None = None
    mime: str | None = None
    categories: list[str] = field(default_factory=list)
    component: str | None = None
    package: str | None = None
    flags: int = 0
    extras: dict[str, str] = field(default_factory=dict)

    @property
    def scheme(self) -> str:
        if not self.data or ":" not in self.data:
            return ""
        return self.data.split(":", 1)[0].lower()

    def ssp(self) -> str:
        """The scheme-specific part, %-decoded, without a query (`tel:%2B1 555` -> `+1 555`)."""
        rest = (self.data or "").split(":", 1)[-1]
        return urllib.parse.unquote(rest.split("?", 1)[0].removeprefix("//"))

    def query(self) -> dict[str, str]:
        rest = (self.data or "").split(":", 1)[-1]
        if "?" not in rest:
            return {}
        return {k: v[0] for k, v in urllib.parse.parse_qs(rest.split("?", 1)[1]).items()}

    def short(self, *, with_flags: bool = False) -> str:
        """`Intent.toShortString(secure=true, comp=true, extras=true, clip=false)` as `am` prints it."""
        parts = []
        if self.action:
            parts.append(f"act={self.action}")
        if self.categories:
            parts.append(f"cat=[{','.join(self.categories)}]")
        if self.data:
            parts.append(f"dat={safe_uri(self.data)}")
        if self.mime:
            parts.append(f"typ={self.mime}")
        flags = self.flags | (FLAG_ACTIVITY_NEW_TASK if with_flags else 0)
        if flags:
            parts.append(f"flg={flags:#x}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            parts.append(f"cmp={self.component}")
        if self.extras:
            parts.append("(has extras)")
        return "{ " + " ".join(parts) + " }"


def safe_uri(uri: str) -> str:
    """AOSP `Uri.toSafeString`: no phone numbers or addresses in logs."""
    scheme, sep, ssp = uri.partition(":")
    if not sep:
        return uri
    low = scheme.lower()
    if low in ("tel", "sip", "sms", "smsto", "mailto", "nfc"):
        return scheme + ":" + "".join(c if c in "-@." else "x" for c in ssp)
    if low in ("http", "https", "ftp", "rtsp"):
        host = urllib.parse.urlsplit(uri).netloc
        return f"{scheme}://{host}/..."
    return uri


def parse_am_intent(args: list[str]) -> Intent:
    """The intent `am start ARGS` describes. Raises ValueError on a malformed option, as `am` does."""
    intent = Intent()
    it = iter(args)
    for a in it:
        if a == "-a":
            intent.action = _need(it, a)
        elif a == "-d":
            intent.data = _need(it, a)
        elif a == "-t":
            intent.mime = _need(it, a)
        elif a == "-c":
            intent.categories.append(_need(it, a))
        elif a == "-n":
            intent.component = _need(it, a)
        elif a == "-p":
            intent.package = _need(it, a)
        elif a == "-f":
            intent.flags |= int(_need(it, a), 0)
        elif a in _EXTRA_OPTS:
            key = _need(it, a)
            intent.extras[key] = "" if a == "--esn" else _need(it, a)
        elif a in _FLAG_OPTS:
            continue
        elif a in _VALUE_OPTS:
            _need(it, a)
        elif a.startswith("-"):
            raise ValueError(f"Unknown option: {a}")
        elif "/" in a and intent.component is None and ":" not in a:
            intent.component = a  # `am start pkg/.Activity`
        else:
            intent.data = a  # a bare URI
    return intent


def _need(it, option: str) -> str:
    value = next(it, None)
    if value is None:
        raise ValueError(f"No argument expected after \"{option}\"")
    return value


def expand_component(component: str) -> str:
    pkg, _, cls = component.partition("/")
    return f"{pkg}/{pkg}{cls}" if cls.startswith(".") else component


# --- what the apps do with an intent ------------------------------------------------------------------


def _app(world: World, package: str) -> Any:
    return world.apps[package]


def _go_home(world: World, intent: Intent) -> bool:
    world.sys.locked = world.sys.locked  # the launcher comes up behind a keyguard too
    world.go_home()
    return True


def _dial(world: World, intent: Intent) -> bool:
    """DIAL / VIEW tel: opens the keypad with the number filled in; nothing is called."""
    app = _app(world, "com.android.dialer")
    app.state.dial = intent.ssp()
    return world.launch(app.package, Route("keypad"))


def _call(world: World, intent: Intent) -> bool:
    """CALL tel: places the call at once (the shell holds CALL_PHONE, as on a phone)."""
    app = _app(world, "com.android.dialer")
    if not world.launch(app.package):
        return False
    app.start_call(intent.ssp())
    return True


def _sms(world: World, intent: Intent) -> bool:
    """SENDTO/VIEW sms:/smsto: opens a new message to the number, the text from ?body= or sms_body."""
    app = _app(world, "com.android.messaging")
    app.state.draft_to = intent.ssp()
    app.state.draft_body = intent.extras.get("sms_body", intent.query().get("body", ""))
    return world.launch(app.package, Route("new"))


def _mailto(world: World, intent: Intent) -> bool:
    """SENDTO/VIEW mailto: opens a compose form (to, ?subject=, ?body= or the EXTRA_SUBJECT/TEXT extras)."""
    app = _app(world, "com.android.email")
    q = intent.query()
    app.state.draft_to = intent.ssp() or intent.extras.get("android.intent.extra.EMAIL", "")
    app.state.draft_subject = q.get("subject", intent.extras.get("android.intent.extra.SUBJECT", ""))
    app.state.draft_body = q.get("body", intent.extras.get("android.intent.extra.TEXT", ""))
    return world.launch(app.package, Route("compose"))


def _browse(world: World, intent: Intent) -> bool:
    """VIEW http(s): the browser loads the address as if typed into its address bar."""
    app = _app(world, "com.android.browser")
    if not world.launch(app.package):
        return False
    app.state.query = intent.data or ""
    app.submit()
    return True


def _launch(package: str) -> Callable[[World, Intent], bool]:
    def open_app(world: World, intent: Intent) -> bool:
        return world.launch(package)

    return open_app


@dataclass(frozen=True)
class IntentFilter:
    """One row of the table: what an activity declares in its manifest, and what it then does."""

    actions: tuple[str, ...]
    package: str
    activity: str  # the resolved component's class, as `am start -W` would name it
    open: Callable[[World, Intent], bool]
    schemes: tuple[str, ...] = ()  # empty: the intent must carry no data
    categories: tuple[str, ...] = ()  # categories the filter declares (an intent's must be a subset)

    def matches(self, intent: Intent) -> bool:
        if intent.action not in self.actions:
            return False
        if self.schemes:
            if intent.scheme not in self.schemes:
                return False
        elif intent.data:
            return False
        allowed = set(self.categories) | {CAT_DEFAULT}
        return all(c in allowed for c in intent.categories)


INTENT_FILTERS: list[IntentFilter] = [
    IntentFilter((MAIN,), "com.android.launcher3", "com.android.launcher3.Launcher", _go_home,
                 categories=(CAT_HOME,)),
    IntentFilter((DIAL, VIEW), "com.android.dialer", "com.android.dialer.DialtactsActivity", _dial,
                 schemes=("tel",), categories=(CAT_BROWSABLE,)),
    IntentFilter((DIAL,), "com.android.dialer", "com.android.dialer.DialtactsActivity", _launch("com.android.dialer")),
    IntentFilter((CALL,), "com.android.dialer", "com.android.server.telecom.components.UserCallActivity", _call,
                 schemes=("tel",)),
    IntentFilter((SENDTO, VIEW), "com.android.messaging", "com.android.messaging.ui.conversation.LaunchConversationActivity",
                 _sms, schemes=("sms", "smsto"), categories=(CAT_BROWSABLE,)),
    IntentFilter((SENDTO, VIEW), "com.android.email", "com.android.email.activity.ComposeActivityEmail", _mailto,
                 schemes=("mailto",), categories=(CAT_BROWSABLE,)),
    IntentFilter((VIEW,), "com.android.browser", "com.android.browser.BrowserActivity", _browse,
                 schemes=("http", "https"), categories=(CAT_BROWSABLE,)),
    IntentFilter((SET_ALARM, SHOW_ALARMS, SET_TIMER), "com.android.deskclock", "com.android.deskclock.HandleApiCalls",
                 _launch("com.android.deskclock")),
]


def resolve(world: World, intent: Intent, installed: set[str]) -> IntentFilter | None:
    """The filter that answers `intent` among installed packages (restricted to `-p PACKAGE` if given)."""
    action = intent.action or ""
    if action.startswith("android.settings.") and "com.android.settings" in installed:
        return IntentFilter((action,), "com.android.settings", "com.android.settings.Settings",
                            _launch("com.android.settings"))
    for f in INTENT_FILTERS:
        if f.package not in installed and f.package != "com.android.launcher3":
            continue
        if intent.package and f.package != intent.package:
            continue
        if f.matches(intent):
            return f
    if action == MAIN and intent.package and intent.package in installed and (
        not intent.categories or intent.categories == [CAT_LAUNCHER]
    ):
        return IntentFilter((MAIN,), intent.package, intent.package, _launch(intent.package))
    return None
