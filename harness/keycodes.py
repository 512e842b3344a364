"""Android key codes for the assistant's buttons, shared by the ADB device and the simulated phone."""

from __future__ import annotations

from assistant_core.types import Button

BUTTON_KEYS: dict[Button, int] = {
    Button.BACK: 4,  # KEYCODE_BACK
    Button.HOME: 3,  # KEYCODE_HOME
    Button.MENU: 82,  # KEYCODE_MENU
    Button.ENTER: 66,  # KEYCODE_ENTER
    Button.RECENTS: 187,  # KEYCODE_APP_SWITCH
    Button.DELETE: 67,  # KEYCODE_DEL
}
