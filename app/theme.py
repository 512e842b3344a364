"""Colour themes, the visible focus ring, and WCAG contrast arithmetic.

A `Theme` is a frozen set of colours; `apply_theme` turns it into a QPalette plus a small style sheet
(thick focus outline, large talk button) for the whole application. `contrast_ratio` is the WCAG 2.x
formula, used by the accessibility audit to check the high-contrast theme reaches 7:1 (level AAA).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ThemeName(StrEnum):
    STANDARD = "standard"
    HIGH_CONTRAST = "high_contrast"


@dataclass(frozen=True)
class Theme:
    """Colours as #rrggbb. `focus` is the focus outline; `accent` fills the talk button."""

    name: ThemeName
    window: str
    text: str
    base: str
    button: str
    button_text: str
    highlight: str
    highlighted_text: str
    disabled_text: str
    placeholder: str
    link: str
    focus: str
    accent: str
    accent_text: str
    tooltip_base: str
    tooltip_text: str


STANDARD = Theme(
    name=ThemeName.STANDARD,
    window="#f4f4f4",
    text="#1a1a1a",
    base="#ffffff",
    button="#e6e6e6",
    button_text="#1a1a1a",
    highlight="#0b57d0",
    highlighted_text="#ffffff",
    disabled_text="#5c5c5c",
    placeholder="#595959",
    link="#0b57d0",
    focus="#0b57d0",
    accent="#0b57d0",
    accent_text="#ffffff",
    tooltip_base="#1a1a1a",
    tooltip_text="#ffffff",
)

HIGH_CONTRAST = Theme(
    name=ThemeName.HIGH_CONTRAST,
    window="#000000",
    text="#ffffff",
    base="#000000",
    button="#000000",
    button_text="#ffffff",
    highlight="#ffff00",
    highlighted_text="#000000",
    disabled_text="#c0c0c0",
    placeholder="#d0d0d0",
    link="#ffff00",
    focus="#ffff00",
    accent="#ffff00",
    accent_text="#000000",
    tooltip_base="#ffffff",
    tooltip_text="#000000",
)

THEMES = {t.name: t for t in (STANDARD, HIGH_CONTRAST)}


def _channel(value: int) -> float:
    c = value / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG relative luminance of an sRGB colour (0 black .. 1 white)."""
    r, g, b = (_channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def parse_hex(color: str) -> tuple[int, int, int]:
    text = color.lstrip("#")
    if len(text) != 6:
        raise ValueError(f"expected #rrggbb, got {color!r}")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def contrast_ratio(a: tuple[int, int, int] | str, b: tuple[int, int, int] | str) -> float:
    """WCAG contrast ratio between two colours, from 1.0 (same) to 21.0 (black on white)."""
    la = relative_luminance(parse_hex(a) if isinstance(a, str) else a)
    lb = relative_luminance(parse_hex(b) if isinstance(b, str) else b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def style_sheet(theme: Theme, *, font_pt: int = 13) -> str:
    """Application style sheet: base font size, a 3 px focus outline on every control, a big talk button."""
    t = theme
    return f"""
* {{ font-size: {font_pt}pt; }}
QWidget {{ color: {t.text}; background-color: {t.window}; }}
QLineEdit, QListView, QListWidget, QTextBrowser, QPlainTextEdit, QSpinBox, QComboBox {{
    background-color: {t.base}; color: {t.text}; border: 1px solid {t.text}; padding: 4px;
}}
QPushButton, QToolButton, QCheckBox, QRadioButton {{ padding: 6px 10px; }}
QPushButton, QToolButton {{ background-color: {t.button}; color: {t.button_text}; border: 2px solid {t.button_text}; border-radius: 4px; }}
QPushButton:disabled {{ color: {t.disabled_text}; border-color: {t.disabled_text}; }}
QPushButton#talkButton {{ background-color: {t.accent}; color: {t.accent_text}; font-size: {font_pt + 7}pt; font-weight: bold; min-height: 72px; }}
QPushButton#talkButton:pressed, QPushButton#talkButton:checked {{ background-color: {t.text}; color: {t.window}; }}
*:focus {{ outline: 3px solid {t.focus}; border: 3px solid {t.focus}; }}
QListView::item:selected, QListWidget::item:selected {{ background-color: {t.highlight}; color: {t.highlighted_text}; }}
QCheckBox::indicator, QListView::indicator {{ width: 18px; height: 18px; border: 2px solid {t.text}; background-color: {t.base}; }}
QCheckBox::indicator:checked, QListView::indicator:checked {{ background-color: {t.highlight}; border-color: {t.text}; }}
QLabel#liveRegion {{ font-weight: bold; }}
QLabel#confirmTitle {{ font-size: {font_pt + 9}pt; font-weight: bold; }}
QLabel#confirmSummary {{ font-size: {font_pt + 5}pt; font-weight: bold; }}
QDialog#confirmDialog QPushButton {{ font-size: {font_pt + 3}pt; min-height: 56px; }}
QToolTip {{ background-color: {t.tooltip_base}; color: {t.tooltip_text}; border: 1px solid {t.tooltip_text}; }}
"""


def make_palette(theme: Theme):
    """A QPalette for the theme (imported lazily so this module's arithmetic needs no Qt)."""
    from PySide6.QtGui import QColor, QPalette

    t = theme
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: t.window,
        QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.base,
        QPalette.ColorRole.AlternateBase: t.base,
        QPalette.ColorRole.Text: t.text,
        QPalette.ColorRole.Button: t.button,
        QPalette.ColorRole.ButtonText: t.button_text,
        QPalette.ColorRole.Highlight: t.highlight,
        QPalette.ColorRole.HighlightedText: t.highlighted_text,
        QPalette.ColorRole.ToolTipBase: t.tooltip_base,
        QPalette.ColorRole.ToolTipText: t.tooltip_text,
        QPalette.ColorRole.PlaceholderText: t.placeholder,
        QPalette.ColorRole.Link: t.link,
        QPalette.ColorRole.BrightText: t.text,
    }
    for role, color in roles.items():
        pal.setColor(QPalette.ColorGroup.All, role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(t.disabled_text))
    return pal


# Pairs (foreground role, background role) a reader must be able to tell apart; the audit checks each.
CONTRAST_PAIRS: tuple[tuple[str, str], ...] = (
    ("WindowText", "Window"),
    ("Text", "Base"),
    ("ButtonText", "Button"),
    ("HighlightedText", "Highlight"),
    ("ToolTipText", "ToolTipBase"),
    ("PlaceholderText", "Base"),
    ("Link", "Base"),
)


def apply_theme(app, theme: Theme, *, font_pt: int = 13) -> None:
    """Install the theme on a QApplication (palette and style sheet)."""
    app.setPalette(make_palette(theme))
    app.setStyleSheet(style_sheet(theme, font_pt=font_pt))
