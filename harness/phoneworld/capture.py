"""Capture an app on a connected phone into a declarative mock app (PhoneWorld's building tool).

    from harness.phoneworld.capture import capture_app
    summary = capture_app(device, "com.example.bank", out_dir, max_steps=200, max_seconds=300)

`device` is any `assistant_core.types.Device` (in the product: `harness.adb.AdbDevice` over the real adb
server, so the same code path reads a real phone and the simulated one). The explorer:

- launches the app clean (force-stop, then open), observes (UI dump + screenshot) and explores
  breadth-first: every enabled clickable element of the app's own windows is tapped once, the screen
  that follows is recorded, and the explorer comes back with Back; when Back leaves the app or lands
  elsewhere it relaunches the app clean and replays the recorded path to the screen it was exploring;
- asks the real safety gate (`assistant_core.safety.SafetyGate.check`, the same judgement the agent loop
  uses) about every tap before making it: an element the gate would confirm or deny is never activated;
  it is recorded as an edge that was not followed (`skipped_sensitive`);
- never types anything (so never into a secure field) and never taps toggles, check boxes, sliders or
  text fields: those become state slots of the mock app (a toggle's checked state, a field's text);
- stops at the step budget (taps, Backs and relaunches) or the time budget;
- masks personal data before anything is written (`mask_text`): phone numbers, e-mail addresses,
  long ID/card numbers, and the names held by the phone's contacts provider.

Screens are told apart by the foreground activity plus the screen's title (digits folded, so
"Cart (1)" and "Cart (2)" are one screen); elements by resource-id, label and their order among
equals. What is not captured (stated in docs/capture.md): content below the fold of a list (no
scrolling), long presses, swipes, and screens reached only after typing.

`record_caregiver(...)` is `--record`: it polls the screen while a caregiver navigates on the mirror and
records each new screen with the tapped element inferred from what changed (see its docstring for the
limits). Both write the same format (SCHEMA), read by `harness.phoneworld.apps.captured`.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant_core.i18n import Text
from assistant_core.safety import GateContext, SafetyGate
from assistant_core.types import Action, DeviceError, Observation, UIElement, Verdict

log = logging.getLogger(__name__)

SCHEMA = "phonebuddy.captured-app/1"
APP_FILE = "app.json"
SYSTEM_PACKAGES = frozenset({"com.android.systemui", "com.android.inputmethod.latin", "android"})

# --- masking ------------------------------------------------------------------------------------------

_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# China's resident ID: 17 digits and a check digit or X.
_RESIDENT_ID_RE = re.compile(r"(?<![\w])\d{17}[\dXx](?![\w])")
# A run of digits with the usual separators, optionally after a country code's "+".
_DIGITS_RE = re.compile(r"(?<![\w])\+?\d[\d ()-]{5,}\d(?![\w])")


def _digits(m: re.Match[str]) -> str:
    run = m.group()
    n = sum(ch.isdigit() for ch in run)
    if not run.startswith("+") and 13 <= n <= 19:
        return "[number]"  # a card or account number
    return "[phone]" if n >= 7 else run


def mask_text(text: str, names: Iterable[str] = ()) -> str:
    """`text` with personal data replaced: e-mails -> [email], ID/card numbers (13-19 digits, or an 18-character
    resident ID) -> [number], phone numbers (7+ digits) -> [phone], each contact name in `names` -> [name].
    Short digit runs (prices, times, counts) stay."""
    if not text:
        return text
    out = _EMAIL_RE.sub("[email]", text)
    out = _RESIDENT_ID_RE.sub("[number]", out)
    out = _DIGITS_RE.sub(_digits, out)
    for name in sorted({n for n in names if len(n.strip()) >= 2}, key=len, reverse=True):
        out = out.replace(name, "[name]")
    return out


def contact_names(device: Any) -> list[str]:
    """The display names in the phone's contacts provider (empty when it cannot be read)."""
    shell = getattr(device, "shell", None)
    if shell is None:
        return []
    try:
        text = shell("content query --uri content://com.android.contacts/data --projection display_name")
    except DeviceError as exc:
        log.info("contacts provider not readable: %s", exc)
        return []
    names = []
    for line in str(text).splitlines():
        m = re.search(r"display_name=(.*?)(?:, \w+=|$)", line)
        if m and m.group(1).strip() not in ("", "NULL"):
            names.append(m.group(1).strip())
    return names


# --- what a screen and an element are -----------------------------------------------------------------


def fold_digits(text: str) -> str:
    return re.sub(r"\d+", "#", text)


def app_elements(obs: Observation, package: str) -> list[UIElement]:
    """The elements of the app's own windows (no status bar, navigation bar, keyboard or system UI)."""
    return [e for e in obs.elements or () if e.package == package and e.area > 0]


def own_label(el: UIElement, elements: list[UIElement]) -> str:
    """The element's label, else the first label inside it (a list row whose text sits in child views)."""
    if el.label:
        return el.label
    for e in elements:
        if e is not el and e.label and e.area < el.area and el.contains(*e.center):
            return e.label
    return ""


def inner_labels(el: UIElement, elements: list[UIElement]) -> list[str]:
    return [e.label for e in elements if e is not el and e.label and e.area < el.area and el.contains(*e.center)]


def screen_title(obs: Observation, package: str) -> str:
    els = app_elements(obs, package)
    for e in els:
        if (e.resource_id in ("android:id/title", "android:id/alertTitle") and e.text and not e.clickable
                and not any(c is not e and (c.clickable or c.checkable) and c.contains(*e.center) for c in els)):
            return e.text
    texts = [e for e in els if e.text and not e.clickable]
    return min(texts, key=lambda e: (e.bounds[1], e.bounds[0])).text if texts else ""


def screen_key(obs: Observation, package: str, names: Iterable[str] = ()) -> str:
    return f"{obs.activity}|{fold_digits(mask_text(screen_title(obs, package), names))}"


def role_of(el: UIElement) -> str:
    cls = el.class_name.rsplit(".", 1)[-1]
    if cls == "EditText":
        return "field"
    if cls == "SeekBar":
        return "slider"
    if el.checkable:
        return "checkbox" if cls == "CheckBox" else "toggle"
    if cls in ("Button", "ImageButton"):
        return "button"
    if cls == "ImageView":
        return "icon"
    if el.clickable:
        return "item"
    if el.resource_id in ("android:id/title", "android:id/alertTitle"):
        return "title"
    if el.scrollable:
        return "list"
    return "text" if el.label else "group"


def element_keys(elements: list[UIElement], names: Iterable[str] = ()) -> list[str]:
    """A stable key per element: resource-id, masked and folded label, and the order among equal ones."""
    seen: dict[str, int] = {}
    keys = []
    for e in elements:
        base = f"{e.resource_id}|{fold_digits(mask_text(own_label(e, elements), names))}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        keys.append(f"{base}#{n}")
    return keys


def is_explorable(el: UIElement) -> bool:
    """Tapped by the explorer: an enabled clickable that is not a toggle, check box, slider or text field."""
    return el.clickable and el.enabled and role_of(el) in ("button", "icon", "item")


# --- the capture --------------------------------------------------------------------------------------


@dataclass
class CapturedScreen:
    id: str
    key: str
    activity: str
    title: str
    path: list[str]
    elements: list[dict[str, Any]]
    screenshot: str = ""
    secure: bool = False


@dataclass
class CaptureResult:
    package: str
    label: str
    screens: list[CapturedScreen] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    steps: int = 0
    stopped: str = "done"  # done | steps | seconds

    @property
    def skipped_sensitive(self) -> list[dict[str, Any]]:
        return [e for e in self.edges if not e["followed"]]

    def summary(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "screens": len(self.screens),
            "edges": len(self.edges),
            "skipped_sensitive": len(self.skipped_sensitive),
            "seconds": round(self.seconds, 2),
            "steps": self.steps,
            "stopped": self.stopped,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "package": self.package,
            "label": self.label,
            "start": self.screens[0].id if self.screens else "",
            "screens": [vars(s) for s in self.screens],
            "edges": self.edges,
            "slots": infer_slots(self.screens),
            "summary": self.summary(),
        }


def describe_element(el: UIElement, key: str, elements: list[UIElement], names: Iterable[str]) -> dict[str, Any]:
    inner = inner_labels(el, elements) if not el.label else []
    d: dict[str, Any] = {
        "key": key,
        "role": role_of(el),
        "text": mask_text(el.text, names),
        "desc": mask_text(el.content_desc, names),
        "id": el.resource_id,
        "class": el.class_name,
        "bounds": list(el.bounds),
        "clickable": el.clickable,
        "enabled": el.enabled,
    }
    if inner:
        d["inner"] = [mask_text(t, names) for t in inner[:2]]
    if el.checkable:
        d["checked"] = el.checked
    if el.password:
        d["password"] = True
    return d


def infer_slots(screens: list[CapturedScreen]) -> list[dict[str, Any]]:
    """The mock app's state: one slot per toggle/check box (bool), text field (str) and slider (float),
    and a read-only list slot for rows that repeat one resource-id three times or more."""
    slots = []
    for s in screens:
        by_id: dict[str, list[str]] = {}
        for e in s.elements:
            name = f"{s.id}.{e['key']}"
            if e["role"] in ("toggle", "checkbox"):
                slots.append({"name": name, "screen": s.id, "element": e["key"], "kind": "bool",
                              "initial": bool(e.get("checked"))})
            elif e["role"] == "field":
                slots.append({"name": name, "screen": s.id, "element": e["key"], "kind": "text",
                              "initial": "", "secure": bool(e.get("password"))})
            elif e["role"] == "slider":
                slots.append({"name": name, "screen": s.id, "element": e["key"], "kind": "number", "initial": 0.5})
            elif e["role"] == "item" and e["id"]:
                by_id.setdefault(e["id"], []).append((e.get("inner") or [e["text"] or e["desc"]])[0])
        for rid, rows in by_id.items():
            if len(rows) >= 3:
                slots.append({"name": f"{s.id}.list:{rid}", "screen": s.id, "kind": "list", "initial": rows})
    return slots


class _Budget(Exception):
    pass


class Explorer:
    """Breadth-first exploration of one app through a Device. See the module docstring."""

    def __init__(
        self,
        device: Any,
        package: str,
        out_dir: Path,
        *,
        max_steps: int = 300,
        max_seconds: float = 600.0,
        gate: SafetyGate | None = None,
        names: Iterable[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.device = device
        self.package = package
        self.out_dir = Path(out_dir)
        self.max_steps = max_steps
        self.max_seconds = max_seconds
        self.gate = gate or SafetyGate()
        self.context = GateContext(allowed_apps=frozenset({package}))
        self.names = list(names) if names is not None else contact_names(device)
        self.clock = clock
        self.result = CaptureResult(package, package)
        self._by_key: dict[str, CapturedScreen] = {}
        self._t0 = 0.0

    # --- device steps, each counted against the budget ---------------------------------------------
    def _spend(self) -> None:
        self.result.steps += 1
        if self.result.steps > self.max_steps:
            self.result.stopped = "steps"
            raise _Budget
        if self.clock() - self._t0 > self.max_seconds:
            self.result.stopped = "seconds"
            raise _Budget

    def _act(self, action: Action) -> Observation:
        self._spend()
        self.device.act(action)
        return self.device.observe()

    def _relaunch(self) -> Observation:
        self._spend()
        self.device.act(Action.close_app(self.package))
        return self._act(Action.open_app(self.package))

    def _key(self, obs: Observation) -> str:
        if obs.foreground != self.package:
            return f"external:{obs.foreground}"
        return screen_key(obs, self.package, self.names)

    def _find(self, obs: Observation, key: str) -> UIElement | None:
        els = app_elements(obs, self.package)
        for e, k in zip(els, element_keys(els, self.names), strict=True):
            if k == key:
                return e
        return None

    def _goto(self, target: CapturedScreen) -> Observation | None:
        """Relaunch clean and replay the path to `target`; None when the path no longer leads there."""
        obs = self._relaunch()
        for key in target.path:
            el = self._find(obs, key)
            if el is None:
                return None
            obs = self._act(Action.click(*el.center))
        return obs if self._key(obs) == target.key else None

    def _record(self, obs: Observation, path: list[str]) -> CapturedScreen:
        key = self._key(obs)
        sid = f"s{len(self.result.screens)}"
        els = app_elements(obs, self.package)
        keys = element_keys(els, self.names)
        shot = ""
        if obs.screenshot is not None and not obs.is_secure:
            (self.out_dir / "screens").mkdir(parents=True, exist_ok=True)
            shot = f"screens/{sid}.png"
            obs.screenshot.save(self.out_dir / shot)
        screen = CapturedScreen(
            sid, key, obs.activity, mask_text(screen_title(obs, self.package), self.names), list(path),
            [describe_element(e, k, els, self.names) for e, k in zip(els, keys, strict=True)], shot, obs.is_secure,
        )
        self.result.screens.append(screen)
        self._by_key[key] = screen
        return screen

    def _edge(self, src: CapturedScreen, el: UIElement, key: str, dst: str | None, *, reason: str = "") -> None:
        edge: dict[str, Any] = {"from": src.id, "element": key, "to": dst, "followed": dst is not None}
        if reason:
            edge["reason"] = reason
        self.result.edges.append(edge)

    def run(self) -> CaptureResult:
        self._t0 = self.clock()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        try:
            obs = self._relaunch()
            if obs.foreground != self.package:
                raise DeviceError(Text("{package} could not be opened on the phone; unlock it and try again.").format(package=self.package), detail=obs.foreground)
            labels = self.device.installed_apps() if hasattr(self.device, "installed_apps") else {}
            self.result.label = mask_text(labels.get(self.package, self.package), self.names)
            queue = deque([self._record(obs, [])])
            while queue:
                self._explore(queue.popleft(), queue)
        except _Budget:
            log.info("capture stopped by its %s budget", self.result.stopped)
        self.result.seconds = self.clock() - self._t0
        return self.result

    def _explore(self, screen: CapturedScreen, queue: deque) -> None:
        obs = self._goto(screen)
        if obs is None or screen.secure:
            return
        els = app_elements(obs, self.package)
        keys = element_keys(els, self.names)
        # The screen as explored (state may have grown since its first visit: a cart with rows now).
        screen.elements = [describe_element(e, k, els, self.names) for e, k in zip(els, keys, strict=True)]
        if screen.screenshot and obs.screenshot is not None:
            obs.screenshot.save(self.out_dir / screen.screenshot)
        todo = [(k, e) for e, k in zip(els, keys, strict=True) if is_explorable(e)]
        for key, _ in todo:
            if self._key(obs) != screen.key:
                obs = self._goto(screen)
                if obs is None:
                    return
            el = self._find(obs, key)
            if el is None:
                continue
            decision = self.gate.check(Action.click(*el.center), obs, self.context)
            if decision.verdict is not Verdict.ALLOW:  # confirmed or denied: recorded, never activated
                self._edge(screen, el, key, None, reason=f"{decision.verdict.value}: {decision.rule}")
                continue
            after = self._act(Action.click(*el.center))
            dst_key = self._key(after)
            if dst_key.startswith("external:"):
                self._edge(screen, el, key, dst_key)
            else:
                dst = self._by_key.get(dst_key)
                if dst is None:
                    dst = self._record(after, screen.path + [key])
                    queue.append(dst)
                self._edge(screen, el, key, dst.id)
            if dst_key != screen.key:
                obs = self._act(Action.press("back"))
            else:
                obs = after


def write_app(result: CaptureResult, out_dir: Path) -> Path:
    path = Path(out_dir) / APP_FILE
    path.write_text(json.dumps(result.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def capture_app(device: Any, package: str, out_dir: Path, **kw: Any) -> CaptureResult:
    """Explore `package` on `device` and write the mock app (app.json + screens/*.png) to `out_dir`."""
    result = Explorer(device, package, Path(out_dir), **kw).run()
    write_app(result, Path(out_dir))
    return result


# --- --record: follow a caregiver ---------------------------------------------------------------------


def infer_tap(before: Observation, after: Observation, package: str, names: Iterable[str] = ()) -> str | None:
    """The key of the element on `before` a caregiver most likely tapped to get `after`: the one whose
    label became the new screen's title. None when it cannot be told (the edge is then recorded without
    an element, and the mock app cannot follow it by a tap)."""
    els = app_elements(before, package)
    keys = element_keys(els, names)
    title = screen_title(after, package)
    for e, k in zip(els, keys, strict=True):
        if is_explorable(e) and title and own_label(e, els) == title:
            return k
    return None


def record_caregiver(
    device: Any,
    package: str,
    out_dir: Path,
    *,
    max_seconds: float = 300.0,
    poll_s: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> CaptureResult:
    """Poll the screen while a caregiver navigates the app on the mirror; record each new screen and an
    edge from the previous one. Limits: the tapped element is inferred (`infer_tap`), not read from the
    input stream; two changes within one poll interval are seen as one; nothing is ever tapped here."""
    ex = Explorer(device, package, Path(out_dir), max_steps=10**9, max_seconds=max_seconds, clock=clock)
    ex._t0 = clock()
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    prev: Observation | None = None
    prev_screen: CapturedScreen | None = None
    while clock() - ex._t0 < max_seconds:
        obs = device.observe()
        key = ex._key(obs)
        if obs.foreground == package and (prev is None or key != ex._key(prev)):
            dst = ex._by_key.get(key)
            if dst is None:
                dst = ex._record(obs, [])
            if prev is not None and prev_screen is not None and prev.foreground == package:
                ek = infer_tap(prev, obs, package, ex.names)
                ex.result.edges.append({"from": prev_screen.id, "element": ek, "to": dst.id, "followed": True,
                                        "recorded": True})
            prev_screen = dst
        prev = obs
        sleep(poll_s)
    ex.result.seconds = clock() - ex._t0
    write_app(ex.result, Path(out_dir))
    return ex.result
