"""Shared helpers for the training tests: a tiny model folder, a narrow "open app X" task family for
the learning check, and a logits processor that forces scripted replies (a random model never emits a
tool call, so GRPO would see zero reward variance without it)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
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
APPS = {  # package -> (English label, Chinese label) as PhoneWorld-lite installs them
    "com.android.settings": "Settings",
    "com.android.dialer": "Phone",
    "com.android.messaging": "Messages",
    "com.android.calendar": "Calendar",
    "com.android.deskclock": "Clock",
    "com.android.gallery3d": "Gallery",
}
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
        label = APPS[params.package]
        yield Move(Action.open_app(params.package), Text(f"Open {label}.", f"打开{label}。"))

    def perturb(self, params: OpenAppParams, rng: random.Random) -> OpenAppParams:
        others = sorted(set(APPS) - {params.package})
        return OpenAppParams(rng.choice(others), params.phrase)


def build_tiny(folder: Path, *, logit_scale: float = 1.0) -> Path:
    """The policy helper's tiny qwen3_5 model with small screenshots. `logit_scale` multiplies the
    random output head: a random head with std 0.02 keeps every logit near zero, and LoRA cannot
    scale it (trl refuses LoRA on lm_head), so the learning check starts from a head with the logit
    range of a trained model."""
    from assistant_core.policy.tiny import build_tiny_model

    out = build_tiny_model(folder, arch="qwen3_5", tokenizer="bpe", max_pixels=TINY_PIXELS,
                           min_pixels=TINY_PIXELS // 4)
    if logit_scale != 1.0:
        import torch
        from transformers import AutoModelForImageTextToText

        model = AutoModelForImageTextToText.from_pretrained(out, dtype=torch.float32)
        with torch.no_grad():
            model.lm_head.weight.mul_(logit_scale)
        model.save_pretrained(out)
    return out


class ForcedReplies:
    """A LogitsProcessor that makes generation emit scripted replies, one script per rollout.

    On the first turn, batch row i follows script i (mod the number of scripts); on later turns a row
    is matched to its script by its first reply, found in the row's tokens. Turn n of a script is
    forced token by token, then the end-of-turn token; past its last turn a row ends at once.
    """

    def __init__(self, tokenizer: Any, scripts: Sequence[Sequence[str]], *, eos: str = "<|im_end|>",
                 turn_marker: str = "<tool_response>"):
        self.tok = tokenizer
        self.eos = tokenizer.convert_tokens_to_ids(eos)
        self.marker = tokenizer.convert_tokens_to_ids(turn_marker)
        self.scripts = [[tokenizer.encode(t, add_special_tokens=False) + [self.eos] for t in s] for s in scripts]
        self._start = None
        self._last = None
        self._rows: dict[int, int] = {}

    def reset(self, prompt_length: int) -> None:
        self._start, self._last = prompt_length, prompt_length - 1

    def _script_of(self, ids: list[int], row: int, turn: int) -> int:
        if turn == 0:
            return row % len(self.scripts)
        text = ids
        for index, script in enumerate(self.scripts):
            first = script[0][:-1]
            n = len(first)
            if any(text[i:i + n] == first for i in range(len(text) - n + 1)):
                return index
        return row % len(self.scripts)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        length = input_ids.shape[1]
        if self._last is None or length != self._last + 1:
            self._start = length
            self._rows = {}
        self._last = length
        k = length - self._start
        forced = torch.full_like(scores, float("-inf"))
        for row in range(input_ids.shape[0]):
            ids = input_ids[row].tolist()
            turn = ids.count(self.marker)
            if row not in self._rows:
                self._rows[row] = self._script_of(ids, row, turn)
            script = self.scripts[self._rows[row]]
            if turn < len(script):
                target = script[turn][k] if k < len(script[turn]) else self.eos
            else:
                target = self.eos
            forced[row, target] = 0.0
        return forced


def force_generation(model: Any, processor: ForcedReplies) -> None:
    """Wrap `model.generate` so every call (trl's rollouts included) uses the processor."""
    from transformers import LogitsProcessorList

    original = model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        kwargs["logits_processor"] = LogitsProcessorList([processor])
        return original(*args, **kwargs)

    model.generate = generate
