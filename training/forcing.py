"""Scripted completions: make a model's generation emit given replies, token by token.

A random-weight model never writes a tool call, so GRPO on it sees one reward for every rollout and
learns nothing (zero advantage). Smoke runs, benchmarks and tests force rollouts to scripted replies
instead, with different scripts inside one group so the verifier's rewards differ:

    forcer = ForcedReplies(processor.tokenizer, [[reply_1, reply_2], [other_reply]])
    force_generation(model, forcer)          # every model.generate call (trl's rollouts too) obeys it
    LocalPolicy(folder, logits_processors=[forcer])   # or through the policy runtime

Scripts are lists of per-turn reply texts; a turn ends with the end-of-turn token. The turn of a row
is the number of tool responses already in its tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
