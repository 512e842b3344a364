"""GRPO on PhoneWorld-lite with trl: multi-turn rollouts through tools that are our Action kinds.

    result = run_rl(RlConfig(base_model=folder, adapter=sft_adapter, mix={"single_app": .5, "cross_app": .5}))

The environment (`PhoneWorldEnv`, one per rollout, made by trl's `environment_factory`):
- `reset(task=, seed=, language=)` builds the task's episode world (`TaskWorld`) on an in-process
  `SimDevice`. The dataset row's prompt is the policy's own first-step request (`build_prompt`, the
  same system prompt, screenshot and instruction as the runtime), so rollouts start where the app
  starts. (trl also renders the tool schemas into a system block; the runtime prompt lists the same
  tools inside the user message.)
- Its public methods are the PhoneBuddy tools, one per Action kind, with the tool schema's argument
  names (`click(points)`, `type(text)`, `button_press(type)`, `open_app(package)`, `wait(time)`, ...).
- The episode runs in the app's own loop (`run_episode`): each call, with the thought the reply reader
  saw, is the reply the loop's policy seat hands over, read by the runtime's parser. So the gate (with
  the front hall's caregiver context: `allowed_apps`, or the task's own apps), confirmations and the re-check before a
  confirmed action, hand-overs, the loop guard, the foreground check, redaction and the step budget are
  those of the app. The simulated user answers as in evaluation: yes on ordinary tasks, no on safety
  tasks (whose risky step was planted, not asked), and does the hand-overs (the wallet PIN, unlocking).
  The tool's reply is made from the loop's events: the gate's refusal, the user's no, a hand-over, an
  unreadable call, or the new screenshot (scaled by `screenshot_scale`) and the foreground app.
- Replies are read by `ReplyReader`, installed as the tokenizer's `parse_response`: every dialect the
  app accepts, a reply starting inside the thought; unreadable replies are counted (`RlResult.replies`).
- `finish` ends the episode; later calls are answered "the episode is over".
- `get_reward()` is the task's verifier over the end state: 1.0 on success, else 0.0 (safety tasks:
  1.0 only when no harm happened and the gate stepped in, `EpisodeResult.gate_intervened`, the one
  definition evaluation and the safety table use). A small format reward (`format_reward` x the share
  of assistant turns that made a well-formed tool call) is added.

Task mix: rows are drawn per category with the `mix` weights, from training seeds (`seeds`, default
100-131) that evaluation does not use. Real+Mock: with `phone_share` > 0 that share of rows are episodes
on connected phones (`PhoneEnv`: an AdbDevice, no world; every confirmation answered no; reward only from
the device-level outcome check), routed by trl's multi-environment `environment_factory`; each
environment class is its own logged reward column (`RlResult.rewards_by_source`). See docs/capture.md.
Generation: vLLM (colocated) when installed and CUDA is present (`vllm="auto"`), else transformers.
Scaling out: the trainer runs on accelerate, so `accelerate launch -m training.cli rl CONFIG` on a
multi-GPU machine needs no code change (see configs/accelerate_multi_gpu.yaml).
"""

from __future__ import annotations

import importlib.util
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.config import RlConfig, config_to_dict
from training.errors import EmptyDatasetError, TrainingError
from training.rl_env import (  # noqa: F401 (the environments, re-exported)
    MSG,
    PHONE_GOALS,
    EnvSettings,
    EnvTrace,
    PhoneEnv,
    PhoneGoal,
    PhoneSettings,
    PhoneWorldEnv,
    Thoughts,
    _ToolCallSeat,
    env_factory,
    phone_env_factory,
    phones_for_process,
    prepare_phone,
)
from training.runs import (
    MANIFEST,
    FreeBytes,
    RunFolder,
    atomic_dir,
    check_free_space,
    disk_free_bytes,
    write_json_atomic,
)

log = logging.getLogger(__name__)


def format_reward(weight: float) -> Callable[..., list[float]]:
    """weight x the share of assistant turns, up to the first `finish` call, that made a tool call."""

    def phonebuddy_format(prompts: Any = None, completions: Any = None, **_: Any) -> list[float]:
        rewards = []
        for completion in completions or []:
            turns = 0
            good = 0
            for message in completion:
                if not isinstance(message, dict) or message.get("role") != "assistant":
                    continue
                turns += 1
                calls = message.get("tool_calls") or []
                good += bool(calls)
                if any(_call_name(c) == "finish" for c in calls):
                    break  # after finish the episode is over; later turns are not the model's task
            rewards.append(weight * good / turns if turns else 0.0)
        return rewards

    return phonebuddy_format


def _call_name(call: Any) -> str:
    function = call.get("function", call) if isinstance(call, dict) else {}
    return str(function.get("name", "")) if isinstance(function, dict) else ""


# --- the dataset: one row per (task, seed), drawn by the category mix --------------------------------


def choose_rows(config: RlConfig, settings: EnvSettings | None = None) -> list[tuple[str, int, str]]:
    """(task id, seed, language) rows: `tasks` if given, else tasks of each category drawn by `mix`."""
    from harness.phoneworld.tasks import registry

    settings = settings or EnvSettings()

    rng = random.Random(config.seed)
    languages = ("en", "zh") if config.language == "mixed" else (config.language,)
    if config.tasks:
        pool = {"chosen": ([settings.task(t).id for t in config.tasks], 1.0)}
    else:
        pool = {}
        for category, weight in config.mix.items():
            ids = [t.id for t in registry.by_category(category)]
            if weight > 0 and ids:
                pool[category] = (ids, weight)
    if not pool:
        raise EmptyDatasetError(f"no PhoneWorld-lite tasks for the mix {config.mix}")
    names = list(pool)
    weights = [pool[n][1] for n in names]
    rows = []
    for _ in range(config.num_examples):
        if config.phone_share > 0 and rng.random() < config.phone_share:
            # A phone episode: "phone:GOAL" (its start state is the phone's, set up over adb at reset).
            rows.append((f"phone:{rng.choice(config.phone_goals)}", 0, rng.choice(languages)))
            continue
        ids = pool[rng.choices(names, weights)[0]][0]
        rows.append((rng.choice(ids), rng.choice(config.seeds), rng.choice(languages)))
    return rows


def is_phone_row(task_id: str) -> bool:
    return task_id.startswith("phone:")


def build_rl_dataset(rows: Sequence[tuple[str, int, str]], *, profile: str, max_pixels: int | None = None,
                     settings: EnvSettings | None = None, phones: PhoneSettings | None = None) -> Any:
    """The GRPO dataset: each row's prompt is the policy's first-step request for that episode. With
    `phones`, rows name their environment ("mock" or "phone", trl's multi-environment routing); a phone
    row's first screen is the first phone's start screen for that goal (set up over adb as at reset)."""
    from datasets import Dataset

    from assistant_core.policy.prompt import build_prompt
    from harness.phoneworld import SimDevice
    from harness.phoneworld.tasks.episode import TaskWorld
    from training.data import storable_messages

    settings = settings or EnvSettings(profile=profile)

    records = []
    cache: dict[tuple[str, int, str], dict[str, Any]] = {}
    for task_id, seed, lang in rows:
        key = (task_id, seed, lang)
        if key not in cache and is_phone_row(task_id):
            if phones is None:
                raise TrainingError("phone rows need phones (phone_share > 0 with phones: [SERIAL, ...])")
            goal = phones.goal(task_id.removeprefix("phone:"))
            observation = prepare_phone(phones.device(phones.serials[0]), goal)
            prompt = build_prompt(goal.goal.get(lang), observation, (), profile, lang=lang, max_pixels=max_pixels)
            cache[key] = {"prompt": storable_messages(prompt.hf_messages()), "images": [prompt.image.image],
                          "task": task_id, "seed": seed, "language": lang, "environment": "phone"}
        if key not in cache:
            task = settings.task(task_id)
            world = TaskWorld(task, seed=seed, language=lang)
            observation = SimDevice(world, ui_xml=False).observe()
            goal = task.instruction(world.task_params).get(lang)
            prompt = build_prompt(goal, observation, (), profile, lang=lang, max_pixels=max_pixels)
            cache[key] = {"prompt": storable_messages(prompt.hf_messages()), "images": [prompt.image.image],
                          "task": task_id, "seed": seed, "language": lang}
            if phones is not None:
                cache[key]["environment"] = "mock"
        records.append(cache[key])
    if not records:
        raise EmptyDatasetError("no RL episodes were chosen")
    return Dataset.from_list(records)


class ReplyReader:
    """trl's tool-call parsing, done by the runtime's own parser: installed as the tokenizer's
    `parse_response`, which trl's GRPO calls on every generated turn.

    Every dialect the app accepts is read (PhoneBuddy JSON, the Qwen3.5 XML form, AutoGLM, mobile_use), and
    a reply that starts inside the thought (the 4B template ends the prompt with `<think>`) or has no
    `</think>`. The call is handed to the environment as the PhoneBuddy tool it stands for, on the model's
    grid. A reply the parser cannot read is counted and logged as such (`counts["unreadable"]`), never a
    silent turn without a call; `counts` also holds the turns read per dialect, and empty turns.
    """

    def __init__(self, tokenizer: Any, profile: str, thoughts: Thoughts | None = None):
        from collections import Counter

        from assistant_core.policy.profiles import get_profile

        self.tokenizer = tokenizer
        self.profile = profile
        self.grid = get_profile(profile).grid
        self.counts: Counter[str] = Counter()
        self.thoughts = thoughts if thoughts is not None else Thoughts()

    def install(self) -> ReplyReader:
        self.tokenizer.parse_response = self
        return self

    def __call__(self, ids: Any, prefix: Any = None, tools: Any = None, **_: Any) -> dict[str, Any]:
        from assistant_core.errors import PolicyOutputError
        from assistant_core.policy.parsing import parse_reply
        from training.data import tool_call

        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        for end in (self.tokenizer.eos_token, self.tokenizer.pad_token, "<|im_end|>", "<|endoftext|>"):
            if end:
                text = text.split(end)[0]
        if not text.strip():
            # trl generates one more turn after a call that ended the episode; an empty turn is counted apart.
            self.counts["empty"] += 1
            return {"role": "assistant", "content": ""}
        try:
            reply = parse_reply(text, self.grid, self.grid, self.profile)
        except PolicyOutputError as error:
            self.counts["unreadable"] += 1
            log.warning("unreadable reply (%s): %.300r", error, text)
            return {"role": "assistant", "content": text}
        self.counts[str(reply.dialect)] += 1
        name, arguments = tool_call(reply.action, self.grid, self.grid, self.profile)
        self.thoughts.put(name, arguments, reply.thought)
        return {"role": "assistant", "content": reply.thought,
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}


def phonebuddy_response_template() -> dict[str, Any]:
    """trl/transformers response template for JSON-in-<tool_call> replies (PhoneBuddy's format)."""
    from trl.chat_template_utils import qwen3_template

    return qwen3_template


def use_vllm(setting: str, on_cuda: bool) -> bool:
    installed = importlib.util.find_spec("vllm") is not None
    if setting == "on":
        if not (installed and on_cuda):
            raise TrainingError("vllm=on needs the vllm package and a CUDA GPU; use vllm: auto or off")
        return True
    return setting == "auto" and installed and on_cuda


@dataclass(frozen=True)
class RlResult:
    run: Path
    adapter: Path
    steps: int
    rewards: tuple[float, ...]
    reward_std: tuple[float, ...]
    losses: tuple[float, ...]
    seconds: float
    vllm: bool
    replies: dict[str, int] = field(default_factory=dict)  # turns read per dialect, and "unreadable"
    # mean reward per logged step of each source: "PhoneWorldEnv" (mock verifiers), "PhoneEnv" (device-level
    # outcome checks), "phonebuddy_format"; a step whose batch held no rollout of a source has none for it
    rewards_by_source: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"run": str(self.run), "adapter": str(self.adapter), "steps": self.steps,
                "rewards": list(self.rewards), "reward_std": list(self.reward_std), "losses": list(self.losses),
                "seconds": round(self.seconds, 2), "steps_per_s": round(self.steps_per_s, 4), "vllm": self.vllm,
                "replies": dict(self.replies),
                "rewards_by_source": {k: list(v) for k, v in self.rewards_by_source.items()}}


def run_rl(config: RlConfig, *, on_progress: Callable[[Any], None] | None = None,
           free_bytes: FreeBytes = disk_free_bytes, run: RunFolder | None = None,
           model: Any = None, settings: EnvSettings | None = None, phones: PhoneSettings | None = None) -> RlResult:
    """GRPO-train a LoRA adapter on PhoneWorld-lite (see the module docstring).

    With `config.phone_share` > 0 it is Real+Mock RL: that share of episodes runs on the phones
    (`config.phones`, or `phones` given), through trl's multi-environment routing ({"mock": PhoneWorldEnv,
    "phone": PhoneEnv}); each environment class is its own logged reward column.

    `model` (optional) is an already loaded base model (tests use it to wrap generation); otherwise it
    is loaded from `base_model` (nf4 on CUDA with quantization auto) and `adapter`, if given, is
    loaded trainable on top.
    """
    from training.sft import check_base_model, cuda_available, load_base, lora_config, make_callbacks

    base = check_base_model(config.base_model)
    min_free = config.min_free_mb * 2**20
    root = Path(config.output)
    check_free_space(root, min_free, free_bytes, what="start training")
    settings = settings or EnvSettings(profile=config.profile, screenshot_scale=config.screenshot_scale,
                                       allowed_apps=config.allowed_apps)
    if config.phone_share > 0 and phones is None:
        import os

        rank, world_size = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
        mine = phones_for_process(config.phones, rank, world_size)
        if len(mine) < config.batch_size:
            raise TrainingError(f"process {rank} of {world_size} has {len(mine)} phones for batch_size "
                                f"{config.batch_size}: list at least batch_size x processes phones")
        phones = PhoneSettings(mine, adb_port=config.adb_port, allowed_apps=config.allowed_apps)
    if config.phone_share <= 0:
        phones = None
    rows = choose_rows(config, settings)
    dataset = build_rl_dataset(rows, profile=config.profile, max_pixels=config.max_pixels or None,
                               settings=settings, phones=phones)
    factory: Any = env_factory(settings)
    if phones is not None:
        factory = {"mock": factory, "phone": phone_env_factory(settings, phones)}
    run = run or RunFolder.create(root, "rl", config.run_name, config=config_to_dict(config))

    import torch
    from trl import GRPOConfig, GRPOTrainer

    from assistant_core.policy.hf_compat import load_processor

    on_cuda = cuda_available()
    vllm = use_vllm(config.vllm, on_cuda)
    started = time.monotonic()
    with run.logging_to_file():
        torch.manual_seed(config.seed)
        if model is None:
            model, processor, _ = load_base(base, config.quantization, on_cuda=on_cuda)
        else:
            processor = load_processor(base)
        peft_config = None
        if config.adapter:
            from peft import PeftModel

            if not (Path(config.adapter) / "adapter_config.json").exists():
                raise TrainingError(f"no adapter in {config.adapter} (expected a folder written by `train sft`)")
            model = PeftModel.from_pretrained(model, config.adapter, is_trainable=True)
        else:
            peft_config = lora_config(config)
        processor.tokenizer.response_template = phonebuddy_response_template()
        reader = ReplyReader(processor.tokenizer, config.profile, settings.thoughts).install()
        args = GRPOConfig(
            output_dir=str(run.checkpoints), max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
            num_generations=config.num_generations, max_completion_length=config.max_completion_length,
            max_tool_calling_iterations=config.max_turns, learning_rate=config.learning_rate,
            temperature=config.temperature, beta=config.beta, seed=config.seed, logging_steps=config.logging_steps,
            save_strategy="steps" if config.save_steps else "no", save_steps=config.save_steps or 500,
            save_total_limit=2, bf16=on_cuda, use_cpu=not on_cuda, gradient_checkpointing=False,
            report_to="none", dataloader_num_workers=0, use_vllm=vllm, vllm_mode=config.vllm_mode, disable_tqdm=True,
            **({"vllm_server_base_url": config.vllm_server_url} if config.vllm_server_url else {}),
        )
        trainer = GRPOTrainer(model=model, reward_funcs=[format_reward(config.format_reward)], args=args,
                              train_dataset=dataset, processing_class=processor, peft_config=peft_config,
                              environment_factory=factory,
                              callbacks=make_callbacks(run, config.max_steps, on_progress=on_progress,
                                                       free_bytes=free_bytes, min_free_bytes=min_free,
                                                       started=started))
        resume = run.latest_checkpoint() if config.resume else None
        trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        seconds = time.monotonic() - started
        history = trainer.state.log_history
        rewards = tuple(float(h["reward"]) for h in history if "reward" in h)
        reward_std = tuple(float(h["reward_std"]) for h in history if "reward_std" in h)
        losses = tuple(float(h["loss"]) for h in history if "loss" in h)
        by_source: dict[str, tuple[float, ...]] = {}
        for h in history:
            for key, value in h.items():
                if (key.startswith("rewards/") and key.endswith("/mean") and isinstance(value, int | float)
                        and value == value):  # None or NaN: no rollout of that source in the step
                    name = key[len("rewards/"):-len("/mean")]
                    by_source[name] = (*by_source.get(name, ()), float(value))
        from training.sft import adapter_bytes

        with atomic_dir(run.adapter, need_bytes=adapter_bytes(trainer.model) + min_free, free_bytes=free_bytes,
                        what="save the adapter") as tmp:
            trainer.model.save_pretrained(str(tmp))
            write_json_atomic(tmp / MANIFEST, {
                "kind": "lora", "stage": "grpo", "base_model": str(base), "init_adapter": config.adapter or None,
                "steps": trainer.state.global_step, "mean_reward_first": rewards[0] if rewards else None,
                "mean_reward_last": rewards[-1] if rewards else None, "replies": dict(reader.counts),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            })
        result = RlResult(run=run.path, adapter=run.adapter, steps=trainer.state.global_step, rewards=rewards,
                          reward_std=reward_std, losses=losses, seconds=seconds, vllm=vllm,
                          replies=dict(reader.counts), rewards_by_source=by_source)
        log.info("replies read: %s", dict(reader.counts))
        run.write_result(result.to_dict())
    return result
