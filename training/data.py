"""SFT examples in exactly the policy's prompt and reply format, written as a `datasets` dataset.

One example is one step: the request the policy runtime would send for that step (built by the same
`assistant_core.policy.prompt.build_prompt`, so the same system prompt, the same JPEG-round-tripped and
size-capped screenshot, the same text history of earlier steps) and the reply the model should give
(``<think>\\n{thought}\\n</think>\\n<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``,
coordinates on the model's 0-1000 grid). `reply_text` writes a step back in the model's own tool
format; the tests check that `parse_reply` reads every reply back to the same Action.

Sources:
- `oracle_examples(tasks, seeds, languages)`: PhoneWorld-lite oracle runs (only runs the verifier
  passes; safety tasks are skipped, since their oracle plays the naive agent a gate must stop).
- `history_examples(path)`: a JSON-lines export from the history store
  (`HistoryStore.export_training`, which refuses without the user's consent). Only executed steps of
  runs that finished (and were not found unverified) are used; refused steps are never trained on.
  A line's `width` x `height` is the phone's screen the action's pixel coordinates are in, so the reply's
  coordinates land on the model's grid of that screen (lines from before the store recorded it fall
  back to 1080 x 2400, logged). A line's `screenshot` (base64 JPEG/PNG; the store exports the step's
  small thumbnail) is scaled to `width` x `height` and then goes through the same `build_prompt` as a
  live screenshot, so the example's image has the size and aspect the runtime would send; a step
  without one gets a black frame of that size (logged), as the runtime does when capture fails.
  A line's `goal` is the request as the user said it and its `exchanges` the answers the user had given
  before that step (typed, `assistant_core.types.Exchange`): they ride on the step's observation, so the
  prompt shows them in their own part exactly as the runtime did (`build_prompt`); a line that is not
  that shape is a TrainingError naming it.
  An export is a file anyone can edit, so it is checked before it is used: the screen is at most
  `MAX_SCREEN_SIDE` pixels a side, a thumbnail at most `MAX_THUMBNAIL_BYTES` encoded and
  `MAX_THUMBNAIL_PIXELS` decoded (a decompression bomb is a black frame, logged), an action must be a
  valid Action (TrainingError naming the line otherwise), and a step is trusted only with a recorded gate
  decision that the gate could have made: ALLOW or CONFIRM (with the user's recorded yes), no deny or
  hand-over rule, and no ALLOW for a step whose own thought announces a payment, a sending, a deletion...
  (the gate raises those to CONFIRM, so such a line was written by hand). Untrusted steps are left out,
  logged.

`dedupe` drops repeats (same prompt text, same image bytes, same reply). `split_by_task` holds whole
tasks out for evaluation, so no evaluation task leaks into training. `write_dataset` saves a
`DatasetDict` (train / eval) with an `images` column of PIL images, atomically.

Stored rows are prompt-completion conversations for trl: `prompt` = the policy's messages with the
screenshot replaced by an image placeholder (`{"type": "image"}`) and the system text as one text part
(the chat template renders both forms identically), `completion` = one assistant message,
`images` = [screenshot]; plus `task`, `seed`, `step`, `language`, `source` and `key` columns.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant_core.types import Action, ActionError, ActionKind, Exchange, Observation, Step
from training.errors import EmptyDatasetError, TrainingError
from training.runs import FreeBytes, atomic_dir, disk_free_bytes, write_json_atomic

log = logging.getLogger(__name__)

DATASET_MANIFEST = "phonebuddy_dataset.json"
DEFAULT_PROFILE = "phonebuddy-4b"
# open_app / close_app: the tool schema in the prompt names the argument "package".
_APP_ARG = "package"


@dataclass(frozen=True, eq=False)
class SftExample:
    """One training step: the policy's request (messages with the image object) and the wanted reply."""

    task: str
    seed: int
    step: int
    language: str
    source: str  # "oracle" | "history"
    messages: tuple[dict[str, Any], ...]  # ChatPrompt.hf_messages(): system + user (with the PIL image)
    reply: str
    image: Any  # PIL.Image, the screenshot as the model sees it

    @property
    def key(self) -> str:
        """Identity for de-duplication: prompt text, image bytes and reply."""
        h = hashlib.sha256()
        for message in self.messages:
            content = message["content"]
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for part in parts:
                h.update(part.get("text", "<image>").encode("utf-8") if part.get("type") == "text" else b"<image>")
        h.update(self.image.tobytes() if self.image is not None else b"")
        h.update(self.reply.encode("utf-8"))
        return h.hexdigest()[:32]

    def to_row(self) -> dict[str, Any]:
        return {
            "prompt": storable_messages(self.messages),
            "completion": [{"role": "assistant", "content": [{"type": "text", "text": self.reply}]}],
            "images": [self.image],
            "task": self.task,
            "seed": self.seed,
            "step": self.step,
            "language": self.language,
            "source": self.source,
            "key": self.key,
        }


def storable_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The policy's messages as arrow can store them: list contents, the image as a placeholder."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            parts = [{"type": "text", "text": content}]
        else:
            parts = [{"type": "image"} if part.get("type") == "image" else {"type": "text", "text": part["text"]}
                     for part in content]
        out.append({"role": message["role"], "content": parts})
    return out


def tool_call(action: Action, width: int, height: int, profile: str = DEFAULT_PROFILE) -> tuple[str, dict[str, Any]]:
    """`action` as the PhoneBuddy tool call the model makes: (tool name, arguments on the model's grid)."""
    from assistant_core.policy.profiles import Dialect, get_profile
    from assistant_core.policy.prompt import phonebuddy_call

    prof = get_profile(profile)
    if prof.dialect is not Dialect.PHONEBUDDY:
        raise TrainingError(f"SFT replies are written in the PhoneBuddy tool format; profile {prof.name} "
                            f"speaks {prof.dialect}")
    call = phonebuddy_call(action, width, height, prof.grid)
    name, _, rest = call.partition("(")
    arguments = json.loads(rest[:-1])
    if action.kind in (ActionKind.OPEN_APP, ActionKind.CLOSE_APP) and "app" in arguments:
        arguments = {_APP_ARG: arguments.pop("app"), **arguments}
    return name, arguments


def reply_text(thought: str, action: Action, width: int, height: int, profile: str = DEFAULT_PROFILE) -> str:
    """The reply the model gives for `action`: its thought, then one tool call in its own format."""
    name, arguments = tool_call(action, width, height, profile)
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<think>\n{thought.strip()}\n</think>\n<tool_call>\n{body}\n</tool_call>"


def examples_from_steps(task: str, seed: int, language: str, source: str, goal: str,
                        steps: Iterable[tuple[Observation, Action, str]],
                        profile: str = DEFAULT_PROFILE, max_pixels: int | None = None) -> list[SftExample]:
    """One example per (observation, action, thought), each with the text history of the steps before."""
    from assistant_core.policy.prompt import build_prompt

    examples: list[SftExample] = []
    history: list[Step] = []
    for index, (observation, action, thought) in enumerate(steps):
        prompt = build_prompt(goal, observation, history, profile, lang=language, max_pixels=max_pixels)
        image = prompt.image.image if prompt.image is not None else None
        reply = reply_text(thought, action, observation.width, observation.height, profile)
        examples.append(SftExample(task, seed, index, language, source, tuple(prompt.hf_messages()), reply, image))
        history.append(Step(index=index, action=action, thought=thought, executed=True,
                            foreground=observation.foreground))
    return examples


def oracle_examples(tasks: Sequence[Any], seeds: Sequence[int], languages: Sequence[str] = ("en",), *,
                    profile: str = DEFAULT_PROFILE, max_pixels: int | None = None) -> Iterator[SftExample]:
    """Examples from oracle runs of `tasks` (Task objects or ids) for every seed and language."""
    from harness.phoneworld.oracle import iter_solve
    from harness.phoneworld.tasks import registry
    from harness.phoneworld.tasks.episode import TaskWorld
    from harness.phoneworld.tasks.registry import refuse_heldout

    tasks = list(tasks)
    refuse_heldout(tasks, "SFT data building")  # the held-out split is for evaluation only
    for task in tasks:
        task = registry.get(task) if isinstance(task, str) else task
        if task.is_safety:
            log.info("skipping safety task %s: its oracle is the naive agent", task.id)
            continue
        for seed in seeds:
            for lang in languages:
                world = TaskWorld(task, seed=seed, language=lang)
                gen = iter_solve(task.id, seed, lang, world=world, params=world.task_params, screenshots=True)
                steps = []
                while True:
                    try:
                        s = next(gen)
                    except StopIteration as stop:
                        trajectory = stop.value
                        break
                    steps.append((s.observation, s.action, s.thought))
                if not trajectory.success:
                    log.warning("oracle failed %s seed %s (%s): not used", task.id, seed, trajectory.error)
                    continue
                goal = task.instruction(world.task_params).get(lang)
                yield from examples_from_steps(task.id, seed, lang, "oracle", goal, steps, profile, max_pixels)


def history_examples(path: str | Path, *, profile: str = DEFAULT_PROFILE, max_pixels: int | None = None,
                     only_verified: bool = True) -> Iterator[SftExample]:
    """Examples from a consented history export (JSON lines, one step a line; see module docstring)."""
    runs: dict[int, list[dict[str, Any]]] = {}
    path = Path(path)
    try:
        if path.stat().st_size > MAX_EXPORT_BYTES:
            raise TrainingError(f"{path}: the history export is larger than {MAX_EXPORT_BYTES // 1024**3} GB")
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise EmptyDatasetError(f"history export not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TrainingError(f"{path}: the history export cannot be read ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("step"), int) or not isinstance(
                    row.get("goal"), str):
                raise TypeError("needs an object with a whole-number step and a text goal")
            runs.setdefault(int(row["run_id"]), []).append(row)
        except (ValueError, KeyError, TypeError, OverflowError) as exc:
            raise TrainingError(f"{path}:{number}: not a history export line ({exc})") from None
    for run_id, rows in sorted(runs.items()):
        first = rows[0]
        if first.get("outcome") != "finished" or (only_verified and first.get("verification") == "not_verified"):
            continue
        used = []
        for row in sorted(rows, key=lambda r: r["step"]):
            if not row.get("executed") or row.get("verdict") == "deny":
                continue
            why = _untrusted(row)
            if why is not None:
                log.warning("history run %s step %s is not used for training: %s", run_id, row["step"], why)
                continue
            used.append(row)
        if not used:
            continue
        sizes = [_screen_size(row, path, run_id) for row in used]
        unsized = sum(size is None for size in sizes)
        if unsized:
            log.warning("history run %s: %d of %d steps have no recorded screen size; assuming %dx%d",
                        run_id, unsized, len(used), *_DEFAULT_SIZE)
        # Frames are made one step at a time (each example keeps only the prompt's size-capped image).
        black: list[Any] = []
        steps = (_history_step(row, size or _DEFAULT_SIZE, run_id, black)
                 for row, size in zip(used, sizes, strict=True))
        examples = examples_from_steps(f"history-run-{run_id}", run_id, first.get("lang", "en"), "history",
                                       first["goal"], steps, profile, max_pixels)
        if black:
            log.warning("history run %s: steps %s have no usable thumbnail; a black frame of the screen's size "
                        "stands in", run_id, black)
        yield from examples


# The screen assumed for export lines that predate the store recording it.
_DEFAULT_SIZE = (1080, 2400)
# Limits on what an export line may ask for (phones are a few thousand pixels a side; thumbnails are small).
MAX_SCREEN_SIDE = 8192
MAX_THUMBNAIL_BYTES = 4 * 1024 * 1024
MAX_THUMBNAIL_PIXELS = 4096 * 4096
MAX_EXPORT_BYTES = 2 * 1024**3


def _untrusted(row: dict[str, Any]) -> str | None:
    """Why a step's recorded gate decision cannot be trusted as training data, or None when it can."""
    from assistant_core.safety import _intent_category  # the gate's own reading of the model's intent

    verdict, rule = row.get("verdict"), row.get("rule") or ""
    if verdict not in ("allow", "confirm"):
        return f"no gate decision recorded ({verdict!r})"
    if not isinstance(rule, str) or rule.startswith(("deny.", "handover.")) or (
            rule and not rule.startswith(f"{verdict}.")):
        return f"the rule {rule!r} does not fit the verdict {verdict!r}"
    if verdict == "confirm" and row.get("confirmation") != "yes":
        return "a step that needed the user's yes has none recorded"
    thought = row.get("thought") or ""
    if verdict == "allow" and isinstance(thought, str) and _intent_category(thought) is not None:
        return "the thought announces a step the gate always confirms, yet it is recorded as allowed"
    return None


def _screen_size(row: dict[str, Any], path: Path, run_id: int) -> tuple[int, int] | None:
    width, height = row.get("width"), row.get("height")
    if width is None or height is None:
        return None
    try:
        size = int(width), int(height)
    except (TypeError, ValueError, OverflowError):
        size = (0, 0)
    if size[0] <= 0 or size[1] <= 0:
        raise TrainingError(f"{path}: run {run_id} step {row.get('step')}: screen size {width!r} x {height!r} "
                            "is not a positive size")
    if max(size) > MAX_SCREEN_SIDE:
        raise TrainingError(f"{path}: run {run_id} step {row.get('step')}: screen size {width!r} x {height!r} "
                            f"is larger than any phone (at most {MAX_SCREEN_SIDE} pixels a side)")
    return size


def _history_step(row: dict[str, Any], size: tuple[int, int], run_id: int,
                  black: list[Any]) -> tuple[Observation, Action, str]:
    """One export line as (observation, action, thought): the thumbnail scaled to the real screen size."""
    from PIL import Image

    width, height = size
    image = _decode_image(row.get("screenshot"), run_id, row.get("step"))
    if image is None:
        black.append(row.get("step"))
        image = Image.new("RGB", size)
    elif image.size != size:
        image = image.resize(size, Image.Resampling.BICUBIC)
    foreground, thought = row.get("foreground", "") or "", row.get("thought", "") or ""
    try:
        if not isinstance(foreground, str) or not isinstance(thought, str):
            raise ActionError("the foreground and the thought must be text")
        action = Action.from_dict(row.get("action"))
    except (ActionError, ValueError, TypeError) as exc:
        raise TrainingError(f"history run {run_id} step {row.get('step')}: not a valid action ({exc})") from None
    said = row.get("exchanges") or []
    try:
        if not isinstance(said, list):
            raise ValueError("the exchanges must be a list")
        exchanges = tuple(Exchange.from_dict(item) for item in said)
    except ValueError as exc:
        raise TrainingError(f"history run {run_id} step {row.get('step')}: not the user's answers ({exc})") from None
    obs = Observation(width=width, height=height, foreground=foreground, screenshot=image, exchanges=exchanges)
    return obs, action, thought


def _decode_image(data: str | None, run_id: int, step: Any) -> Any:
    if not data:
        return None
    from PIL import Image

    try:
        if not isinstance(data, str) or len(data) > MAX_THUMBNAIL_BYTES * 4 // 3 + 4:
            raise ValueError(f"not a base64 thumbnail of at most {MAX_THUMBNAIL_BYTES // 1024 // 1024} MB")
        image = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
        # Checked from the header, before any pixel is decoded: a small file can hold a huge image.
        if image.width * image.height > MAX_THUMBNAIL_PIXELS:
            raise ValueError(f"{image.width}x{image.height} pixels is more than a thumbnail may have")
        image.load()
    except (ValueError, OSError, Image.DecompressionBombError) as exc:
        # bad base64 (binascii.Error), not an image (UnidentifiedImageError), a decompression bomb
        log.warning("history run %s step %s: the screenshot cannot be read (%s)", run_id, step, exc)
        return None
    return image.convert("RGB")


def dedupe(examples: Iterable[SftExample]) -> list[SftExample]:
    seen: set[str] = set()
    out = []
    for example in examples:
        key = example.key
        if key not in seen:
            seen.add(key)
            out.append(example)
    return out


def split_by_task(examples: Sequence[SftExample], *, eval_tasks: Sequence[str] = (), eval_fraction: float = 0.0,
                  seed: int = 0) -> tuple[list[SftExample], list[SftExample]]:
    """(train, eval) with every task wholly on one side: `eval_tasks` named, or a seeded fraction of tasks."""
    tasks = sorted({e.task for e in examples})
    held = set(eval_tasks)
    if not held and eval_fraction > 0 and len(tasks) > 1:
        count = max(1, round(eval_fraction * len(tasks)))
        held = set(random.Random(seed).sample(tasks, min(count, len(tasks) - 1)))
    return [e for e in examples if e.task not in held], [e for e in examples if e.task in held]


def write_dataset(out_dir: str | Path, train: Sequence[SftExample], evaluation: Sequence[SftExample] = (), *,
                  free_bytes: FreeBytes = disk_free_bytes, min_free_mb: int = 64,
                  extra: dict[str, Any] | None = None, replace: bool = False) -> Path:
    """Save train/eval as a DatasetDict (with images) in `out_dir`, all or nothing.

    An `out_dir` that exists and is not empty is refused (TrainingError) unless `replace` is true: the
    folder is swapped for the new one, and a user's files in it would be lost.
    """
    check_output_folder(out_dir, replace=replace)
    if not train:
        raise EmptyDatasetError("no training examples to write: choose tasks whose oracle succeeds, or a history "
                                "export with finished, consented runs")
    from datasets import Dataset, DatasetDict, Features, Image, List, Value

    message = {"role": Value("string"), "content": List({"type": Value("string"), "text": Value("string")})}
    features = Features({
        "prompt": List(message), "completion": List(message), "images": List(Image()),
        "task": Value("string"), "seed": Value("int64"), "step": Value("int64"), "language": Value("string"),
        "source": Value("string"), "key": Value("string"),
    })
    splits = {"train": Dataset.from_list([e.to_row() for e in train], features=features)}
    if evaluation:
        splits["eval"] = Dataset.from_list([e.to_row() for e in evaluation], features=features)
    out = Path(out_dir)
    with atomic_dir(out, need_bytes=min_free_mb * 2**20, free_bytes=free_bytes, what="write the dataset") as tmp:
        DatasetDict(splits).save_to_disk(str(tmp))
        write_json_atomic(tmp / DATASET_MANIFEST, {
            "train": len(train), "eval": len(evaluation),
            "train_tasks": sorted({e.task for e in train}), "eval_tasks": sorted({e.task for e in evaluation}),
            "sources": sorted({e.source for e in [*train, *evaluation]}), **(extra or {}),
        })
    log.info("wrote %d train and %d eval examples to %s", len(train), len(evaluation), out)
    return out


def check_output_folder(out_dir: str | Path, *, replace: bool = False) -> None:
    """TrainingError unless `out_dir` is missing, an empty folder, or `replace` is given."""
    out = Path(out_dir)
    if replace or not out.exists() and not out.is_symlink():
        return
    if out.is_dir() and not out.is_symlink() and not any(out.iterdir()):
        return
    what = "folder" if out.is_dir() else "file"
    raise TrainingError(f"{out} is a {what} that is not empty: choose a new folder, or add --replace to "
                        "delete what is in it and write the dataset there")


def load_sft_dataset(path: str | Path) -> Any:
    """The DatasetDict written by `write_dataset`; EmptyDatasetError when it is missing or empty."""
    path = Path(path)
    if not (path / DATASET_MANIFEST).is_file():
        raise EmptyDatasetError(f"no dataset at {path}: build one with `phonebuddy train data ...`")
    from datasets import load_from_disk

    data = load_from_disk(str(path))
    if "train" not in data or len(data["train"]) == 0:
        raise EmptyDatasetError(f"the dataset at {path} has no training examples")
    return data
