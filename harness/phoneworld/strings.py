"""The system UI's bilingual strings (status bar, home, keyboard, dialogs, lock screen, shade)."""

from __future__ import annotations

from assistant_core.i18n import Catalog, Text

SYSTEM = Catalog(
    "phoneworld.system",
    {
        "wifi_on": "Wi-Fi on",
        "wifi_off": "Wi-Fi off",
        "battery": "Battery {pct} percent",
        "airplane": "Airplane mode",
        "bluetooth": "Bluetooth",
        "wifi": "Wi-Fi",
        "dark": "Dark theme",
        "back": "Back",
        "home": "Home",
        "recents": "Overview",
        "no_recents": "No recent items",
        "clear_all": "Clear all",
        "close_app": "Close {app}",
        "unlock_hint": "Swipe up to unlock",
        "locked": "Locked",
        "notifications": "Notifications",
        "no_notifications": "No notifications",
        "paste": "Paste",
        "copy": "Copy",
        "select_all": "Select all",
        "cut": "Cut",
        "copied": "Copied",
        "allow": "Allow",
        "deny": "Don't allow",
        "perm_photos": "Allow {app} to access photos and videos on this device?",
        "perm_location": "Allow {app} to access this device's location?",
        "perm_contacts": "Allow {app} to access your contacts?",
        "perm_camera": "Allow {app} to take pictures and record video?",
        "perm_microphone": "Allow {app} to record audio?",
        "perm_notifications": "Allow {app} to send you notifications?",
        "stopped": "{app} has stopped",
        "close": "Close app",
        "open_again": "Open app again",
        "space": "space",
        "delete": "Delete",
        "enter": "Enter",
        "shift": "Shift",
        "search_apps": "Search apps",
        "out_of_bounds": "That point ({x}, {y}) is outside the screen.",
        "unknown_app": "There is no app called {app} on this phone.",
        "ok": "OK",
        "cancel": "Cancel",
    },
)


def system_text(key: str) -> Text:
    return SYSTEM[key]
