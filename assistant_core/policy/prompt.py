"""The request a phone model sees, built exactly the way its own runner builds it.

For PhoneBuddy (the team's eval runner, `Qwen3_5_SFT_EN_Prompt`): an empty system message, then one user
message of three parts: the system prompt text (GUI agent instructions, the tools as JSON schemas, the
0-1000 coordinate rule, the <tool_call> format), the current screenshot as JPEG (quality 90), and
``# Instruction\\n<goal>`` followed, when the user has answered questions in this run, by one line per
answer in the layout's `exchange` form (`formats.json`): the typed `Observation.exchanges`, rendered here
and only here by `render_exchanges` (the goal itself is never changed; the lines are byte for byte what
the models saw when the loop still glued the answers onto the goal); then, when there are earlier steps, by
``\\n\\n# History of Previous Actions\\n`` and one ``- Step N:\\nThought: ...\\nAction: func({json})`` block per
step (JSON with non-ASCII kept). Only the current screenshot is sent; the history is text.

Prompt texts are data files in `prompts/` (`<family>.<lang>.txt`, and `formats.json` for the request and
history layout), in English and Chinese. The English PhoneBuddy prompt is the one the model was trained
with; the Chinese one is our translation, for experiments (`lang="zh"`).

Public API:
- `build_prompt(goal, observation, history, profile=None, *, lang="en", feedback=None) -> ChatPrompt`
- `ChatPrompt.hf_messages()` (transformers chat template input) and `.openai_messages()` (chat completions)
- `action_to_call(action, width, height, profile)` -> ``click({"points": [[500, 500]]})``: an Action in
  device pixels written back in the model's own tool format on its grid (used for the history).
- `prepare_screenshot(image, profile)` -> the JPEG-round-tripped, size-capped image the model sees.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from assistant_core.i18n import normalize_lang
from assistant_core.policy.profiles import Dialect, ModelProfile, get_profile
from assistant_core.toolbox import TOOLS
from assistant_core.types import Action, ActionKind, Exchange, Observation, Step

log = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).with_name("prompts")


@lru_cache(maxsize=32)
def prompt_text(family: str, lang: str = "en", *, tool_actions: bool = False) -> str:
    """The system prompt text of a prompt family (phonebuddy, autoglm, mobile_use) in a language. With
    `tool_actions`, a prompt that lists its tools as JSON schemas (`<tools>...</tools>`) also lists the
    registered tool actions (`tool_action_schemas`); the trained profiles' prompts are left as trained."""
    path = PROMPTS_DIR / f"{family}.{normalize_lang(lang)}.txt"
    if not path.exists():
        raise KeyError(f"no prompt file {path.name}")
    text = path.read_text(encoding="utf-8")
    if tool_actions and "\n</tools>" in text:
        lines = "\n".join(json.dumps(schema, ensure_ascii=False) for schema in tool_action_schemas())
        text = text.replace("\n</tools>", "\n" + lines + "\n</tools>", 1)
    return text


def tool_action_schemas() -> list[dict[str, Any]]:
    """Every registered tool action as the JSON function schema its ToolSpec gives (assistant_core.toolbox):
    the same objects the parser accepts and the gate judges."""
    return [spec.schema() for spec in TOOLS.values()]


@lru_cache(maxsize=1)
def _formats() -> dict[str, Any]:
    return json.loads((PROMPTS_DIR / "formats.json").read_text(encoding="utf-8"))


@dataclass(frozen=True, eq=False)
class ImagePart:
    """The screenshot as the model sees it: decoded from the JPEG that is sent."""

    image: Any  # PIL.Image.Image
    jpeg: bytes

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def data_url(self) -> str:
        return "data:image/jpeg;base64," + base64.b64encode(self.jpeg).decode("ascii")


@dataclass(frozen=True, eq=False)
class ChatPrompt:
    """A system text ("" for PhoneBuddy, still sent as a system message) and the user parts in order."""

    system: str
    user: tuple[str | ImagePart, ...]

    @property
    def image(self) -> ImagePart | None:
        return next((p for p in self.user if isinstance(p, ImagePart)), None)

    @property
    def text(self) -> str:
        """All user text, without the image (for logs and token estimates)."""
        return "\n".join(p for p in self.user if isinstance(p, str))

    def hf_messages(self) -> list[dict[str, Any]]:
        content = [{"type": "image", "image": p.image} if isinstance(p, ImagePart) else {"type": "text", "text": p}
                   for p in self.user]
        return [{"role": "system", "content": self.system}, {"role": "user", "content": content}]

    def openai_messages(self) -> list[dict[str, Any]]:
        content = [{"type": "image_url", "image_url": {"url": p.data_url()}} if isinstance(p, ImagePart)
                   else {"type": "text", "text": p} for p in self.user]
        return [{"role": "system", "content": self.system}, {"role": "user", "content": content}]


def fit_pixels(width: int, height: int, min_pixels: int, max_pixels: int, factor: int = 32) -> tuple[int, int]:
    """The size to send: aspect kept, sides multiples of `factor` (Qwen VL: patch 16 x merge 2), area within
    [min_pixels, max_pixels]. The same rule as the Qwen processors' smart_resize, so they keep this size."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return w_bar, h_bar


def prepare_screenshot(image: Any, profile: ModelProfile, *, max_pixels: int | None = None,
                       min_pixels: int | None = None) -> ImagePart:
    """Resize to the profile's pixel budget, encode as JPEG and decode again (what the model sees)."""
    from PIL import Image

    if isinstance(image, bytes | bytearray):
        image = Image.open(io.BytesIO(image))
    rgb = image.convert("RGB")
    target = fit_pixels(rgb.width, rgb.height, min_pixels or profile.min_pixels, max_pixels or profile.max_pixels)
    if target != rgb.size:
        rgb = rgb.resize(target, Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    rgb.save(buffer, format="JPEG", quality=profile.jpeg_quality)
    jpeg = buffer.getvalue()
    decoded = Image.open(io.BytesIO(jpeg))
    decoded.load()
    return ImagePart(image=decoded.convert("RGB"), jpeg=jpeg)


def _observation_image(observation: Observation) -> Any:
    from PIL import Image

    if observation.screenshot is None:
        log.warning("observation has no screenshot; sending a black frame of %dx%d",
                    observation.width, observation.height)
        return Image.new("RGB", (observation.width, observation.height))
    return observation.screenshot


# --- Action -> the model's own call syntax ----------------------------------------------------------


def _to_grid(value: int | None, size: int, grid: int) -> int:
    return max(0, min(grid, round((value or 0) * grid / size)))


def phonebuddy_call(action: Action, width: int, height: int, grid: int = 1000) -> str:
    """``func({json})`` in PhoneBuddy's tools, coordinates on the grid, non-ASCII kept."""
    def pt(x: int | None, y: int | None) -> list[int]:
        return [_to_grid(x, width, grid), _to_grid(y, height, grid)]

    kind = action.kind
    params: dict[str, Any]
    if kind in (ActionKind.CLICK, ActionKind.DOUBLE_CLICK):
        params = {"points": [pt(action.x, action.y)]}
    elif kind is ActionKind.LONG_PRESS:
        params = {"points": [pt(action.x, action.y)], "duration": action.duration_ms or 800}
    elif kind in (ActionKind.SCROLL, ActionKind.DRAG):
        params = {"points": [pt(action.x, action.y), pt(action.x2, action.y2)]}
        if action.duration_ms is not None:
            params["duration"] = action.duration_ms
    elif kind is ActionKind.TYPE:
        params = {"text": action.text or ""}
    elif kind is ActionKind.BUTTON_PRESS:
        params = {"type": str(action.button)}
    elif kind in (ActionKind.OPEN_APP, ActionKind.CLOSE_APP):
        params = {"app": action.app or ""}  # the runner's history writes "app", not "package"
    elif kind is ActionKind.WAIT:
        params = {"time": action.duration_ms if action.duration_ms is not None else 1000}
    elif action.is_tool:  # call, send_text, set_alarm, ...: the fields the parser reads back
        params = {k: v for k, v in action.to_dict().items() if k != "kind"}
    else:  # output, call_user, finish
        params = {"text": action.text or ""}
    return f"{kind.value}({json.dumps(params, ensure_ascii=False)})"


_MOBILE_BUTTONS = {"back": "Back", "home": "Home", "menu": "Menu", "enter": "Enter"}


def mobile_use_call(action: Action, width: int, height: int, grid: int = 999) -> str:
    def pt(x: int | None, y: int | None) -> list[int]:
        return [_to_grid(x, width, grid), _to_grid(y, height, grid)]

    kind = action.kind
    args: dict[str, Any]
    if kind is ActionKind.CLICK or kind is ActionKind.DOUBLE_CLICK:
        args = {"action": "click", "coordinate": pt(action.x, action.y)}
    elif kind is ActionKind.LONG_PRESS:
        args = {"action": "long_press", "coordinate": pt(action.x, action.y), "time": (action.duration_ms or 800) / 1000}
    elif kind in (ActionKind.SCROLL, ActionKind.DRAG):
        args = {"action": "swipe", "coordinate": pt(action.x, action.y), "coordinate2": pt(action.x2, action.y2)}
    elif kind is ActionKind.TYPE:
        args = {"action": "type", "text": action.text or ""}
    elif kind is ActionKind.BUTTON_PRESS:
        args = {"action": "system_button", "button": _MOBILE_BUTTONS.get(str(action.button), str(action.button))}
    elif kind is ActionKind.OPEN_APP:
        args = {"action": "open", "text": action.app or ""}
    elif kind is ActionKind.CLOSE_APP:
        args = {"action": "key", "text": "home"}
    elif kind is ActionKind.WAIT:
        args = {"action": "wait", "time": (action.duration_ms or 1000) / 1000}
    elif kind is ActionKind.CALL_USER:
        args = {"action": "interact", "text": action.text or ""}
    elif kind is ActionKind.OUTPUT:
        args = {"action": "answer", "text": action.text or ""}
    else:
        args = {"action": "terminate", "status": "success"}
    return json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)


def autoglm_call(action: Action, width: int, height: int, grid: int = 1000) -> str:
    def pt(x: int | None, y: int | None) -> str:
        return f"[{min(grid - 1, _to_grid(x, width, grid))},{min(grid - 1, _to_grid(y, height, grid))}]"

    def q(s: str | None) -> str:
        return json.dumps(s or "", ensure_ascii=False)

    kind = action.kind
    if kind is ActionKind.CLICK:
        return f'do(action="Tap", element={pt(action.x, action.y)})'
    if kind is ActionKind.DOUBLE_CLICK:
        return f'do(action="Double Tap", element={pt(action.x, action.y)})'
    if kind is ActionKind.LONG_PRESS:
        return f'do(action="Long Press", element={pt(action.x, action.y)})'
    if kind in (ActionKind.SCROLL, ActionKind.DRAG):
        return f'do(action="Swipe", start={pt(action.x, action.y)}, end={pt(action.x2, action.y2)})'
    if kind is ActionKind.TYPE:
        return f"do(action=\"Type\", text={q(action.text)})"
    if kind is ActionKind.BUTTON_PRESS:
        name = {"back": "Back", "home": "Home"}.get(str(action.button), "Back")
        return f'do(action="{name}")'
    if kind is ActionKind.OPEN_APP:
        return f"do(action=\"Launch\", app={q(action.app)})"
    if kind is ActionKind.CLOSE_APP:
        return 'do(action="Home")'
    if kind is ActionKind.WAIT:
        return f'do(action="Wait", duration="{(action.duration_ms or 1000) / 1000:g} seconds")'
    if kind is ActionKind.CALL_USER:
        return f"do(action=\"Take_over\", message={q(action.text)})"
    return f"finish(message={q(action.text)})"


def action_to_call(action: Action, width: int, height: int, profile: str | ModelProfile | None = None) -> str:
    """An Action in device pixels, written the way the profile's model writes its calls."""
    prof = get_profile(profile)
    if prof.dialect is Dialect.MOBILE_USE:
        return mobile_use_call(action, width, height, prof.grid)
    if prof.dialect is Dialect.AUTOGLM:
        return autoglm_call(action, width, height, prof.grid)
    return phonebuddy_call(action, width, height, prof.grid)


# --- the request ------------------------------------------------------------------------------------


def render_history(history: Sequence[Step], width: int, height: int, profile: ModelProfile, lang: str) -> str:
    layout = _formats()[profile.prompt][normalize_lang(lang)]
    steps = []
    for n, step in enumerate(history, start=1):
        call = action_to_call(step.action, width, height, profile)
        text = layout["step"].format(n=n, thought=(step.thought or "").strip(), action=call)
        if step.error:
            text = text.rstrip("\n") + f"\n({step.error})\n"
        elif step.result:  # what a tool read or did (a query's answer)
            text = text.rstrip("\n") + f"\n(Result: {step.result})\n"
        steps.append(text)
    joined = "".join(steps).strip()
    if not joined:
        return layout.get("empty_history", "")
    return layout["history"].format(steps=joined)


def render_exchanges(exchanges: Sequence[Exchange], profile: ModelProfile, lang: str) -> str:
    """The user's answers in this run, the part of the request right after the goal: one line each in the
    layout's `exchange` form (`formats.json`); "" when nothing was asked. The one place the typed exchanges
    become prompt text."""
    layout = _formats()[profile.prompt][normalize_lang(lang)]
    return "".join(layout["exchange"].format(answer=exchange.answer) for exchange in exchanges)


def build_prompt(goal: str, observation: Observation, history: Sequence[Step] = (),
                 profile: str | ModelProfile | None = None, *, lang: str = "en", feedback: str | None = None,
                 max_pixels: int | None = None, min_pixels: int | None = None, tool_actions: bool = False) -> ChatPrompt:
    """The full request for one step. `goal` is the request as the user said it; the user's answers come
    from `observation.exchanges` (see `render_exchanges`). `feedback` (optional) tells the model why its last
    reply was refused; `tool_actions` offers the registered tool actions too (see `prompt_text`)."""
    prof = get_profile(profile)
    fmt = _formats()[prof.prompt]
    layout = fmt[normalize_lang(lang)]
    system_text = prompt_text(prof.prompt, lang, tool_actions=tool_actions)
    if "{date}" in system_text:
        system_text = system_text.replace("{date}", time.strftime("%Y-%m-%d, %A"))
    history_text = render_history(history, observation.width, observation.height, prof, lang)
    exchanges = render_exchanges(observation.exchanges, prof, lang)
    request = layout["request"].format(goal=goal.strip(), exchanges=exchanges, history=history_text,
                                       screen_info=json.dumps({"current_app": observation.foreground},
                                                              ensure_ascii=False))
    if feedback:
        note = ("\n\n# 注意\n你上一次的回复无法执行：{f}\n请只用一个工具调用重新回复。" if normalize_lang(lang) == "zh"
                else "\n\n# Note\nYour previous reply could not be used: {f}\nReply again with exactly one tool call.")
        request += note.format(f=feedback.strip())
    image = prepare_screenshot(_observation_image(observation), prof, max_pixels=max_pixels, min_pixels=min_pixels)
    parts: dict[str, str | ImagePart] = {"prompt": system_text, "image": image, "request": request}
    user = tuple(parts[name] for name in fmt["layout"])
    system = system_text if fmt["system_role"] == "prompt" else ""
    return ChatPrompt(system=system, user=user)
