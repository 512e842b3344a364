"""An accessibility audit over a live widget tree: what a screen-reader user would trip over.

- every visible, enabled control that can take keyboard focus has a non-empty accessible name (as the
  accessibility API reports it, `QAccessible.queryAccessibleInterface(w).text(Name)`) and a description;
- the Tab chain, followed from the window's first control, reaches every such control;
- `palette_contrasts(palette)` gives the WCAG contrast of each foreground/background role pair.
Used by the tests and by `phonebuddy --self-check`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QPalette
from PySide6.QtWidgets import QWidget

from app.theme import CONTRAST_PAIRS, contrast_ratio


@dataclass(frozen=True)
class Problem:
    widget: str
    issue: str

    def __str__(self) -> str:
        return f"{self.widget}: {self.issue}"


def describe(w: QWidget) -> str:
    return f"{type(w).__name__}#{w.objectName() or '?'}"


def focusable_controls(root: QWidget) -> list[QWidget]:
    """Visible, enabled widgets under `root` that Tab can reach (Qt's TabFocus policy bit)."""
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisibleTo(root) or not w.isEnabled():
            continue
        if w.focusPolicy() & Qt.FocusPolicy.TabFocus and w.focusProxy() is None and w.window() is root.window():
            out.append(w)
    return out


def accessible_name(w: QWidget) -> str:
    iface = QAccessible.queryAccessibleInterface(w)
    return "" if iface is None else iface.text(QAccessible.Text.Name)


def accessible_description(w: QWidget) -> str:
    iface = QAccessible.queryAccessibleInterface(w)
    return "" if iface is None else iface.text(QAccessible.Text.Description)


def tab_chain(root: QWidget, start: QWidget | None = None) -> list[QWidget]:
    """The controls Tab visits, in order, from `start` (default: the first focusable control found)."""
    controls = focusable_controls(root)
    if not controls:
        return []
    seen: list[QWidget] = []
    w = start or controls[0]
    for _ in range(2000):
        if w in seen:
            break
        if w in controls:
            seen.append(w)
        w = w.nextInFocusChain()
    return seen


def audit_widget_tree(root: QWidget) -> list[Problem]:
    problems = []
    controls = focusable_controls(root)
    for w in controls:
        if not accessible_name(w).strip():
            problems.append(Problem(describe(w), "no accessible name"))
        if not accessible_description(w).strip():
            problems.append(Problem(describe(w), "no accessible description"))
    reached = set(map(id, tab_chain(root)))
    for w in controls:
        if id(w) not in reached:
            problems.append(Problem(describe(w), "not reachable with Tab"))
    return problems


def palette_contrasts(palette: QPalette, group: QPalette.ColorGroup = QPalette.ColorGroup.Active) -> dict[str, float]:
    """WCAG contrast for each (foreground, background) role pair of `palette`."""
    out = {}
    for fg, bg in CONTRAST_PAIRS:
        a = palette.color(group, getattr(QPalette.ColorRole, fg))
        b = palette.color(group, getattr(QPalette.ColorRole, bg))
        out[f"{fg}/{bg}"] = contrast_ratio((a.red(), a.green(), a.blue()), (b.red(), b.green(), b.blue()))
    return out
