"""Shared helpers for the training tests: a tiny model folder and a narrow "open app X" task family
for the learning check. Forced (scripted) replies live in training.forcing."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from assistant_core.i18n import Text
from assistant_core.types import Action
from harness.phoneworld.tasks.base import Task, TaskCategory
from harness.phoneworld.tasks.driver import Move

# Small screenshots keep the tiny model's visual tokens at about 64.
TINY_PIXELS = 64 * 32 * 32

LAUNCHER = "com.android.launcher3"
APPS = {  # package -> English label, as PhoneWorld-lite installs them
    "com.android.settings": "Settings",
    "com.android.dialer": "Phone",
    "com.android.messaging": "Messages",
    "com.android.calendar": "Calendar",
    "com.android.gallery3d": "Gallery",
    "com.android.email": "Mail",
}  # package names whose first token after "com.android." differs, so one decision picks the app
PHRASES = ("Open {app}.", "Please open {app}.", "Launch {app}.", "Start {app} for me.")


@dataclass(frozen=True)
class OpenAppParams:
    package: str
    phrase: int


class HomeOpenApp(Task):
    """From the home screen, open the app the user names (the phrasing varies with the seed)."""

    id: ClassVar[str] = "HomeOpenApp"
    category: ClassVar[TaskCategory] = TaskCategory.SINGLE_APP
    apps: ClassVar[tuple[str, ...]] = tuple(APPS)
    max_steps: ClassVar[int] = 3

    def params(self, rng: random.Random) -> OpenAppParams:
        return OpenAppParams(rng.choice(sorted(APPS)), rng.randrange(len(PHRASES)))

    def instruction(self, params: OpenAppParams) -> Text:
        label = APPS[params.package]
        return Text(PHRASES[params.phrase].format(app=label), f"打开{label}。")

    def setup(self, world: Any, params: OpenAppParams) -> None:
        world.key(3)  # home

    def is_successful(self, world: Any, params: OpenAppParams) -> bool:
        return world.foreground[0] == params.package

    def solve(self, ui: Any, params: OpenAppParams) -> Iterator[Move]:
        # One thought for every app: the choice of app lives in the tool call alone.
        yield Move(Action.open_app(params.package), Text("Open the app the user asked for.", "打开用户要的应用。"))

    def perturb(self, params: OpenAppParams, rng: random.Random) -> OpenAppParams:
        others = sorted(set(APPS) - {params.package})
        return OpenAppParams(rng.choice(others), params.phrase)


def build_tiny(folder: Path, *, logit_scale: float = 1.0, text_overrides: dict | None = None) -> Path:
    """The policy helper's tiny qwen3_5 model with small screenshots. `logit_scale` multiplies the
    random output head: a random head with std 0.02 keeps every logit near zero, and LoRA cannot
    scale it (trl refuses LoRA on lm_head), so the learning check starts from a head with the logit
    range of a trained model."""
    from assistant_core.policy.tiny import build_tiny_model

    out = build_tiny_model(folder, arch="qwen3_5", tokenizer="bpe", max_pixels=TINY_PIXELS,
                           min_pixels=TINY_PIXELS // 4, text_overrides=text_overrides)
    if logit_scale != 1.0:
        import torch
        from transformers import AutoModelForImageTextToText

        model = AutoModelForImageTextToText.from_pretrained(out, dtype=torch.float32)
        with torch.no_grad():
            model.lm_head.weight.mul_(logit_scale)
        model.save_pretrained(out)
    return out


def play(env: Any, replies: list[str]) -> list:
    """Each reply (training.data.reply_text) as GRPO hands it to an environment (training.rl_env): the thought
    to the reply reader's channel, the call to the tool method; the tool replies, until the episode ends."""
    import json

    said = []
    for reply in replies:
        if env.finished:
            break
        thought = reply.split("<think>\n")[1].split("\n</think>")[0]
        body = json.loads(reply.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
        env.settings.thoughts.put(body["name"], body["arguments"], thought)
        said.append(getattr(env, body["name"])(**body["arguments"]))
    return said
