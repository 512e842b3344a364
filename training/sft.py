"""Supervised fine-tuning: trl's SFTTrainer with LoRA (peft), QLoRA (bitsandbytes nf4 base) on CUDA.

    result = run_sft(SftConfig(base_model=folder, dataset=data_dir), on_progress=bar.update)
    result.adapter   # <run>/adapter: LocalPolicy(folder, adapter_dir=result.adapter) loads it directly

Contract:
- The dataset is the one `training.data.write_dataset` made: prompt-completion conversations in the
  policy's exact format with the screenshot as an image. The loss is on the reply only (trl's
  completion-only loss for prompt-completion data: the prompt, image tokens included, is masked).
  Images go through the base model's own processor (`hf_compat.load_processor`).
- Checks before any work: the dataset exists and is not empty (EmptyDatasetError), the base model
  folder holds a model (BaseModelMissingError), enough free disk for checkpoints and the adapter
  (DiskSpaceError; `free_bytes` is injectable). Free space is checked again before every checkpoint
  and before the adapter is written.
- Checkpoints go to `<run>/checkpoints/` every `save_steps`; with `resume` a rerun in the same run
  folder (same `run_name`) continues from the newest complete checkpoint.
- The adapter is written into a temporary folder and renamed to `<run>/adapter/` only when complete,
  with `phonebuddy_adapter.json` (base model, steps, losses) written last. A failed or interrupted run
  leaves no `adapter/` folder.
- fp32 compute on CPU (this kind of CPU has no bf16 units), bf16 on CUDA; gradient checkpointing off
  unless asked.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.config import SftConfig, config_to_dict
from training.data import load_sft_dataset
from training.errors import BaseModelMissingError, DiskSpaceError
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


@dataclass(frozen=True)
class Progress:
    """One progress report: `step` of `total`, the latest loss (None between logs)."""

    step: int
    total: int
    loss: float | None = None
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class SftResult:
    run: Path
    adapter: Path
    steps: int
    losses: tuple[float, ...]
    seconds: float
    train_examples: int
    trainable_params: int
    quantization: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"run": str(self.run), "adapter": str(self.adapter), "steps": self.steps,
                "first_loss": self.losses[0] if self.losses else None,
                "last_loss": self.losses[-1] if self.losses else None, "losses": list(self.losses),
                "seconds": round(self.seconds, 2), "steps_per_s": round(self.steps_per_s, 3),
                "train_examples": self.train_examples, "trainable_params": self.trainable_params,
                "quantization": self.quantization, **self.extra}


def check_base_model(base: str) -> Path:
    """The base model folder, or BaseModelMissingError saying how to get one."""
    from assistant_core.policy.weights import is_model_folder

    path = Path(base).expanduser()
    if path.is_dir() and is_model_folder(path):
        return path
    if path.is_dir():
        raise BaseModelMissingError(f"{path} holds no model (no config.json and weights): give the folder of a "
                                    "downloaded checkpoint")
    raise BaseModelMissingError(f"base model not found: {base}. Download it first (`phonebuddy models download`) "
                                "or give the path of a local checkpoint folder")


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def load_base(base: Path, quantization: str, *, on_cuda: bool) -> tuple[Any, Any, str]:
    """(model, processor, quantization used). nf4 keeps the vision tower and lm_head unquantized."""
    import torch
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor

    quant = ("nf4" if on_cuda else "none") if quantization == "auto" else quantization
    kwargs: dict[str, Any] = {"dtype": torch.bfloat16 if on_cuda else torch.float32}
    if quant == "nf4":
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16 if on_cuda else torch.float32,
            llm_int8_skip_modules=["visual", "lm_head"])
        kwargs["device_map"] = {"": 0} if on_cuda else "cpu"
    model = AutoModelForImageTextToText.from_pretrained(str(base), **kwargs)
    if quant == "nf4":
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    return model, load_processor(base), quant


def lora_config(config: Any) -> Any:
    from peft import LoraConfig

    return LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=getattr(config, "lora_dropout", 0.0),
                      target_modules=config.lora_targets, task_type="CAUSAL_LM",
                      modules_to_save=list(getattr(config, "lora_modules_to_save", ()) or []) or None)


def make_callbacks(run: RunFolder, total: int, *, on_progress: Callable[[Progress], None] | None,
                   free_bytes: FreeBytes, min_free_bytes: int, started: float) -> list[Any]:
    """Trainer callbacks: metrics to the run folder, progress reports, a free-space check before saves."""
    from transformers import TrainerCallback

    class RunCallback(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs:
                run.log_metrics({"step": state.global_step, **{k: v for k, v in logs.items()
                                                               if isinstance(v, int | float | str)}})
                if on_progress is not None and "loss" in logs:
                    on_progress(Progress(state.global_step, total, float(logs["loss"]), time.monotonic() - started))

        def on_step_end(self, args, state, control, **kwargs):
            if on_progress is not None:
                on_progress(Progress(state.global_step, total, None, time.monotonic() - started))
            if control.should_save:
                check_free_space(run.checkpoints, min_free_bytes, free_bytes, what="save a checkpoint")
            return control

    return [RunCallback()]


def adapter_bytes(model: Any) -> int:
    """An estimate of the adapter's size on disk (trainable parameters in fp32, plus a margin)."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return int(trainable * 4 * 1.2) + 2**20


def sft_args(config: SftConfig, output_dir: str | Path, *, on_cuda: bool) -> Any:
    """trl's SFTConfig for a run: the loss is on the reply only (`completion_only_loss`), fp32 on the CPU."""
    from trl import SFTConfig as TrlSftConfig

    return TrlSftConfig(
        output_dir=str(output_dir), max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate, lr_scheduler_type=config.lr_scheduler,
        warmup_steps=config.warmup_steps, weight_decay=config.weight_decay, max_grad_norm=config.max_grad_norm,
        logging_steps=config.logging_steps, seed=config.seed, report_to="none",
        save_strategy="steps" if config.save_steps else "no", save_steps=config.save_steps or 500,
        save_total_limit=2, bf16=on_cuda, fp16=False, use_cpu=not on_cuda,
        gradient_checkpointing=config.gradient_checkpointing, max_length=None, dataloader_num_workers=0,
        completion_only_loss=True, disable_tqdm=True,
    )


def run_sft(config: SftConfig, *, on_progress: Callable[[Progress], None] | None = None,
            free_bytes: FreeBytes = disk_free_bytes, run: RunFolder | None = None) -> SftResult:
    """Train a LoRA adapter; see the module docstring for every check and what is written where."""
    data = load_sft_dataset(config.dataset)
    base = check_base_model(config.base_model)
    min_free = config.min_free_mb * 2**20
    root = Path(config.output)
    check_free_space(root, min_free, free_bytes, what="start training")
    run = run or RunFolder.create(root, "sft", config.run_name, config=config_to_dict(config))

    import torch
    from trl import SFTTrainer

    on_cuda = cuda_available()
    started = time.monotonic()
    with run.logging_to_file():
        log.info("SFT: base %s, dataset %s (%d train rows), run %s", base, config.dataset, len(data["train"]),
                 run.path)
        torch.manual_seed(config.seed)
        model, processor, quant = load_base(base, config.quantization, on_cuda=on_cuda)
        args = sft_args(config, run.checkpoints, on_cuda=on_cuda)
        trainer = SFTTrainer(model=model, args=args, train_dataset=data["train"], processing_class=processor,
                             peft_config=lora_config(config),
                             callbacks=make_callbacks(run, config.max_steps, on_progress=on_progress,
                                                      free_bytes=free_bytes, min_free_bytes=min_free,
                                                      started=started))
        resume = run.latest_checkpoint() if config.resume else None
        if resume is not None:
            log.info("resuming from %s", resume)
        trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        seconds = time.monotonic() - started
        losses = tuple(float(h["loss"]) for h in trainer.state.log_history if "loss" in h)
        trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
        with atomic_dir(run.adapter, need_bytes=adapter_bytes(trainer.model) + min_free, free_bytes=free_bytes,
                        what="save the adapter") as tmp:
            trainer.model.save_pretrained(str(tmp))
            if not (tmp / "adapter_config.json").exists():
                raise DiskSpaceError(f"the adapter was not written completely to {tmp}")
            write_json_atomic(tmp / MANIFEST, {
                "kind": "lora", "base_model": str(base), "steps": trainer.state.global_step,
                "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
                "quantization": quant, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "dataset": str(config.dataset), "train_examples": len(data["train"]),
            })
        result = SftResult(run=run.path, adapter=run.adapter, steps=trainer.state.global_step, losses=losses,
                           seconds=seconds, train_examples=len(data["train"]), trainable_params=trainable,
                           quantization=quant)
        run.write_result(result.to_dict())
        log.info("SFT done: %d steps in %.1f s, loss %s -> %s", result.steps, seconds,
                 losses[0] if losses else None, losses[-1] if losses else None)
    return result
