"""The names models write for PhoneBuddy's tools and buttons, and the canonical name each means. The GUI
tools are listed here; the tool actions come from the tool registry (assistant_core.toolbox), so a new
tool's names live in its ToolSpec only. Split out of `policy.parsing` (issue 26: no module over 800 lines),
which re-exports them.
"""

from __future__ import annotations

from assistant_core.toolbox import TOOLS
from assistant_core.toolspec import ALIASES
from assistant_core.types import Button

# Canonical PhoneBuddy tool names and the synonyms models write for them.
TOOL_ALIASES: dict[str, str] = {
    "click": "click", "tap": "click", "left_click": "click", "press_point": "click",
    "double_click": "double_click", "double_tap": "double_click", "doubleclick": "double_click",
    "long_press": "long_press", "longpress": "long_press", "long_click": "long_press", "long_tap": "long_press",
    "type": "type", "input": "type", "input_text": "type", "type_text": "type", "text": "type", "type_name": "type",
    "scroll": "scroll", "swipe": "scroll", "fling": "scroll",
    "drag": "drag", "drag_and_drop": "drag",
    "button_press": "button_press", "press_button": "button_press", "press": "button_press", "key": "button_press",
    "system_button": "button_press", "press_key": "button_press", "keyevent": "button_press",
    "back": "back", "press_back": "back", "navigate_back": "back",
    "home": "home", "press_home": "home", "navigate_home": "home",
    "enter": "enter", "press_enter": "enter", "keyboard_enter": "enter",
    "open_app": "open_app", "open": "open_app", "launch": "open_app", "launch_app": "open_app",
    "start_app": "open_app", "awake": "open_app",
    "close_app": "close_app", "stop_app": "close_app", "force_stop": "close_app", "kill_app": "close_app",
    "wait": "wait", "sleep": "wait",
    "output": "output", "say": "output", "tell_user": "output", "note": "output",
    "call_user": "call_user", "ask_user": "call_user", "interact": "call_user", "take_over": "call_user",
    "takeover": "call_user", "request_user": "call_user",
    "finish": "finish", "answer": "finish", "terminate": "finish", "done": "finish", "complete": "finish",
    "status": "finish", "stop": "finish",
}
# Tool actions, from the tool registry (assistant_core.toolbox): for profiles whose prompt offers them, and
# replies that use them anyway (the gate judges them like taps).
TOOL_ALIASES.update(ALIASES)
TOOL_ACTIONS = tuple(TOOLS)
KNOWN_TOOLS = (
    "click", "double_click", "long_press", "type", "scroll", "drag", "button_press", "open_app",
    "close_app", "wait", "output", "call_user", "finish",
)

BUTTON_ALIASES: dict[str, Button] = {
    "back": Button.BACK, "keycode_back": Button.BACK, "4": Button.BACK, "return": Button.BACK,
    "home": Button.HOME, "keycode_home": Button.HOME, "3": Button.HOME, "desktop": Button.HOME,
    "menu": Button.MENU, "keycode_menu": Button.MENU, "82": Button.MENU,
    "enter": Button.ENTER, "keycode_enter": Button.ENTER, "66": Button.ENTER, "ok": Button.ENTER,
    "search": Button.ENTER,
    "recents": Button.RECENTS, "recent": Button.RECENTS, "app_switch": Button.RECENTS,
    "keycode_app_switch": Button.RECENTS, "187": Button.RECENTS, "overview": Button.RECENTS,
    "delete": Button.DELETE, "del": Button.DELETE, "backspace": Button.DELETE, "keycode_del": Button.DELETE,
    "67": Button.DELETE,
}
