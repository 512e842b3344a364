"""Shared fixtures for tests that need a policy model: tiny random-weight checkpoints of the real
architectures (built once per session), a forced-reply logits processor (so a random model writes a
chosen reply through the real generate path), and a phone-like 1080x2400 screenshot.

Use from any test module:

    from policy_fixtures import TEST_MAX_PIXELS, ForcedReply, phone_observation, tiny_model_dir
    pytest_plugins = ("policy_fixtures",)   # registers the tiny_qwen3_5 / tiny_qwen3_vl fixtures

`tiny_qwen3_5` / `tiny_qwen3_vl` are session fixtures returning the folder of a tiny model with the BPE
tokenizer; `tiny_model_dir(factory, arch, tokenizer)` builds any variant once per session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_BUILT: dict[tuple[str, str], Path] = {}
TEST_MAX_PIXELS = 96 * 32 * 32  # at most 96 visual tokens for a 1080x2400 screenshot: keeps CPU runs fast


def tiny_model_dir(factory: pytest.TempPathFactory, arch: str, tokenizer: str = "bpe") -> Path:
    key = (arch, tokenizer)
    if key not in _BUILT:
        from assistant_core.policy.tiny import build_tiny_model

        _BUILT[key] = build_tiny_model(factory.mktemp(f"tiny_{arch}_{tokenizer}"), arch=arch, tokenizer=tokenizer)
    return _BUILT[key]


@pytest.fixture(scope="session")
def tiny_qwen3_5(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory, "qwen3_5")


@pytest.fixture(scope="session")
def tiny_qwen3_vl(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory, "qwen3_vl")


def phone_screenshot(width: int = 1080, height: int = 2400):
    """A settings-list-like screen: a status bar, rows with labels, a bottom navigation bar."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, width, 80), fill=(30, 30, 30))
    for i, label in enumerate(["Wi-Fi", "Bluetooth", "Display", "Sound", "Battery", "Apps", "Privacy"]):
        top = 200 + i * 220
        draw.rectangle((40, top, width - 40, top + 180), fill=(255, 255, 255), outline=(200, 200, 200))
        draw.text((80, top + 70), label, fill=(20, 20, 20))
    draw.rectangle((0, height - 140, width, height), fill=(235, 235, 235))
    return img


def phone_observation(width: int = 1080, height: int = 2400):
    from assistant_core.types import Observation

    return Observation(width=width, height=height, foreground="com.android.settings",
                       screenshot=phone_screenshot(width, height))


class ForcedReply:
    """A LogitsProcessor that makes the model write `text` (then end of turn), whatever its weights.

    Pass it to LocalPolicy(logits_processors=[ForcedReply(tokenizer, text)]); LocalPolicy calls
    `reset(prompt_length)` before each generation.
    """

    def __init__(self, tokenizer, text: str):
        self.ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.prompt_length = 0

    def reset(self, prompt_length: int) -> None:
        self.prompt_length = prompt_length

    def __call__(self, input_ids, scores):
        import torch

        step = input_ids.shape[1] - self.prompt_length
        target = self.ids[step] if step < len(self.ids) else self.end
        forced = torch.full_like(scores, float("-inf"))
        forced[:, target] = 0.0
        return forced
