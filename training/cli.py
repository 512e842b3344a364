"""`phonebuddy train data|sft|rl|eval ...`: personalize the policy and measure it.

    phonebuddy train data --categories single_app --seeds 0-19 --out data/sft
    phonebuddy train sft training/configs/sft_lora.yaml --base-model ./tiny --dataset data/sft
    phonebuddy train rl training/configs/rl_real_mock.yaml --adapter runs/sft-.../adapter
    phonebuddy train eval --policy oracle --json
    phonebuddy train eval --policy scripted --script replies/ --tasks SettingsTurnOnWifi --seeds 0
    phonebuddy train eval --policy local --model ./PhoneBuddy-4B --adapter runs/sft-.../adapter
    phonebuddy train eval --split heldout --policy noop --fast-path --json   (the held-out split: eval only)

Configs are JSON or YAML files (see training/configs/); flags override single settings. Each command
writes a run folder under `--output` (default `runs/`): config.json, train.log, metrics.jsonl,
checkpoints/, adapter/ and result.json (eval: results.jsonl with one line per episode). Progress goes
to stderr as a bar; `--json` prints the result as JSON on stdout. A problem the user can fix (a bad
config, an empty dataset, a missing model, a full disk) prints one clear line and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def parse_seeds(text: str) -> tuple[int, ...]:
    """'0-3,7' -> (0, 1, 2, 3, 7)."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                lo, hi = part.split("-", 1)
                seeds.extend(range(int(lo), int(hi) + 1))
            else:
                seeds.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must look like 0-9,12 (got {text!r})") from None
    if not seeds:
        raise argparse.ArgumentTypeError("give at least one seed")
    return tuple(seeds)


def _csv(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="phonebuddy train", description="Personalize and evaluate the policy.")
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="build an SFT dataset from oracle runs and consented history exports")
    data.add_argument("--out", required=True, help="dataset folder to write (new or empty)")
    data.add_argument("--replace", action="store_true",
                      help="delete what --out holds and write the dataset there")
    data.add_argument("--tasks", type=_csv, default=(), help="task ids, comma-separated")
    data.add_argument("--categories", type=_csv, default=("single_app", "cross_app", "mini_app"))
    data.add_argument("--seeds", type=parse_seeds, default=(100, 101, 102, 103))
    data.add_argument("--languages", type=_csv, default=("en",))
    data.add_argument("--history", action="append", default=[], help="a history export (JSON lines); repeatable")
    data.add_argument("--eval-tasks", type=_csv, default=(), help="tasks held out for evaluation")
    data.add_argument("--eval-fraction", type=float, default=0.0, help="share of tasks held out, if none named")
    data.add_argument("--profile", default="phonebuddy-4b")
    data.add_argument("--max-pixels", type=int, default=0)
    data.add_argument("--json", action="store_true")

    for name, helptext in (("sft", "supervised fine-tuning with LoRA (QLoRA on CUDA)"),
                           ("rl", "GRPO on PhoneWorld-lite tasks with verifier rewards")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("config", nargs="?", help="a JSON or YAML config file")
        p.add_argument("--base-model")
        p.add_argument("--output", help="folder that receives the run folder")
        p.add_argument("--run-name", help="a fixed run folder name (reuse it to resume)")
        p.add_argument("--max-steps", type=int)
        p.add_argument("--learning-rate", type=float)
        p.add_argument("--json", action="store_true")
        p.add_argument("--no-progress", action="store_true")
        if name == "sft":
            p.add_argument("--dataset")
        else:
            p.add_argument("--adapter")
            p.add_argument("--tasks", type=_csv)
            p.add_argument("--seeds", type=parse_seeds)

    ev = sub.add_parser("eval", help="success rate by category on held-out PhoneWorld-lite tasks")
    ev.add_argument("config", nargs="?", help="a JSON or YAML config file")
    from phonebuddy.policyspec import BUILDERS  # every backend the front hall's factory builds

    ev.add_argument("--policy", choices=sorted(BUILDERS))
    ev.add_argument("--script", help="scripted: a file of model replies, or a folder of TASK.txt files")
    ev.add_argument("--model", help="local: model folder; remote: model name")
    ev.add_argument("--adapter", help="local: LoRA adapter folder")
    ev.add_argument("--endpoint", help="remote: OpenAI-compatible base URL")
    ev.add_argument("--tasks", type=_csv)
    ev.add_argument("--split", choices=("seen", "heldout"), default="seen",
                    help="seen: the tasks training may use; heldout: the held-out split (evaluation only)")
    ev.add_argument("--categories", type=_csv)
    ev.add_argument("--fast-path", action="store_true",
                    help="the fast path first (no model), the chosen policy for what it hands over")
    ev.add_argument("--seeds", type=parse_seeds)
    ev.add_argument("--language", choices=("en", "zh"))
    ev.add_argument("--max-steps", type=int)
    ev.add_argument("--output")
    ev.add_argument("--run-name")
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--no-progress", action="store_true")
    return parser


def _config(cls: type, path: str | None, **overrides: Any) -> Any:
    from training.config import config_from_dict, load_config

    overrides = {k: v for k, v in overrides.items() if v is not None}
    if path:
        return load_config(path, cls, **overrides)
    return config_from_dict(cls, overrides, source="command line")


class _Bar:
    """A tqdm bar on stderr fed by Progress reports (or nothing, with --no-progress)."""

    def __init__(self, total: int, desc: str, enabled: bool):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, file=sys.stderr, unit="step", dynamic_ncols=True)

    def progress(self, report: Any) -> None:
        if self.bar is None:
            return
        if report.step > self.bar.n:
            self.bar.update(report.step - self.bar.n)
        if report.loss is not None:
            self.bar.set_postfix(loss=f"{report.loss:.4f}")

    def episode(self, result: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(last=f"{result.task}@{result.seed}:{'ok' if result.success else 'fail'}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _emit(data: dict[str, Any], as_json: bool, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2) if as_json else text)


def cmd_data(args: argparse.Namespace) -> int:
    from training.data import (
        check_output_folder,
        dedupe,
        history_examples,
        oracle_examples,
        split_by_task,
        write_dataset,
    )
    from training.evaluate import select_episodes

    check_output_folder(args.out, replace=args.replace)  # before any work, not after it
    examples = []
    if args.tasks or args.categories:
        tasks = sorted({e.task.id for e in select_episodes(args.tasks, args.categories, (0,))})
        examples += list(oracle_examples(tasks, args.seeds, args.languages, profile=args.profile,
                                         max_pixels=args.max_pixels or None))
    for path in args.history:
        examples += list(history_examples(path, profile=args.profile, max_pixels=args.max_pixels or None))
    examples = dedupe(examples)
    train, held = split_by_task(examples, eval_tasks=args.eval_tasks, eval_fraction=args.eval_fraction)
    out = write_dataset(args.out, train, held, replace=args.replace)
    data = {"dataset": str(out), "train": len(train), "eval": len(held),
            "train_tasks": sorted({e.task for e in train}), "eval_tasks": sorted({e.task for e in held})}
    _emit(data, args.json, f"wrote {len(train)} training and {len(held)} evaluation examples to {out}")
    return 0


def cmd_sft(args: argparse.Namespace) -> int:
    from training.config import SftConfig
    from training.sft import run_sft

    config = _config(SftConfig, args.config, base_model=args.base_model, dataset=args.dataset, output=args.output,
                     run_name=args.run_name, max_steps=args.max_steps, learning_rate=args.learning_rate)
    bar = _Bar(config.max_steps, "sft", not args.no_progress)
    try:
        result = run_sft(config, on_progress=bar.progress)
    finally:
        bar.close()
    losses = result.losses
    _emit(result.to_dict(), args.json,
          f"adapter: {result.adapter}\nsteps: {result.steps} in {result.seconds:.1f} s "
          f"({result.steps_per_s:.2f} steps/s); loss {losses[0] if losses else float('nan'):.4f} -> "
          f"{losses[-1] if losses else float('nan'):.4f}\nrun folder: {result.run}")
    return 0


def cmd_rl(args: argparse.Namespace) -> int:
    from training.config import RlConfig
    from training.rl import run_rl

    config = _config(RlConfig, args.config, base_model=args.base_model, output=args.output, run_name=args.run_name,
                     max_steps=args.max_steps, learning_rate=args.learning_rate, adapter=args.adapter,
                     tasks=list(args.tasks) if args.tasks else None,
                     seeds=list(args.seeds) if args.seeds else None)
    bar = _Bar(config.max_steps, "grpo", not args.no_progress)
    try:
        result = run_rl(config, on_progress=bar.progress)
    finally:
        bar.close()
    _emit(result.to_dict(), args.json,
          f"adapter: {result.adapter}\nsteps: {result.steps} in {result.seconds:.1f} s; mean reward per step: "
          f"{', '.join(f'{r:.2f}' for r in result.rewards)}\nrun folder: {result.run}")
    return 0


def policy_spec(config: Any, *, fast_path: bool = False) -> Any:
    """The front hall's PolicySpec for an EvalConfig (phonebuddy.policyspec), after the checks that save a
    long evaluation from failing half-way (a base model and an adapter that are really there)."""
    from phonebuddy.policyspec import PolicySpec
    from training.errors import TrainingError

    if config.policy == "scripted" and not config.script:
        raise TrainingError("--policy scripted needs --script FILE_OR_FOLDER")
    if config.policy in ("local", "cpu"):
        if not config.model:
            raise TrainingError("--policy local needs --model FOLDER")
        from training.sft import check_base_model

        check_base_model(config.model)
        if config.adapter and not (Path(config.adapter) / "adapter_config.json").exists():
            raise TrainingError(f"no adapter in {config.adapter} (expected a folder written by `train sft`)")
    if config.policy == "remote" and not config.endpoint:
        raise TrainingError("--policy remote needs --endpoint URL")
    local = config.policy in ("local", "cpu")
    return PolicySpec(backend=config.policy, model=config.profile, script=config.script,
                      model_dir=config.model if local else "", adapter_dir=config.adapter if local else "",
                      url=config.endpoint, served_model="" if local else config.model,
                      max_pixels=config.max_pixels or None, max_new_tokens=config.max_new_tokens or None,
                      fast_path=fast_path)


def make_factory(config: Any, *, fast_path: bool = False) -> Any:
    """The PolicyFactory for an EvalConfig: its spec, built per episode by the front hall's one factory."""
    from training.evaluate import spec_policies

    return spec_policies(policy_spec(config, fast_path=fast_path))


def cmd_eval(args: argparse.Namespace) -> int:
    from training.config import EvalConfig, config_to_dict
    from training.evaluate import check_scripts, evaluate, select_episodes
    from training.runs import RunFolder

    config = _config(EvalConfig, args.config, policy=args.policy, script=args.script, model=args.model,
                     adapter=args.adapter, endpoint=args.endpoint, tasks=list(args.tasks) if args.tasks else None,
                     categories=list(args.categories) if args.categories else None,
                     seeds=list(args.seeds) if args.seeds else None, language=args.language,
                     max_steps=args.max_steps, output=args.output, run_name=args.run_name)
    episodes = select_episodes(config.tasks, config.categories, config.seeds, split=args.split)
    factory = make_factory(config, fast_path=bool(args.fast_path))
    if config.policy == "scripted":
        check_scripts(config.script, episodes)
    run = RunFolder.create(config.output, "eval", config.run_name, config=config_to_dict(config))
    bar = _Bar(len(episodes), f"eval {config.policy}", not args.no_progress)
    try:
        with run.logging_to_file():
            report = evaluate(episodes, factory, policy_name=config.policy, language=config.language,
                              max_steps=config.max_steps, screenshots=config.policy in ("local", "remote"),
                              results_path=run.path / "results.jsonl", on_result=bar.episode)
    finally:
        bar.close()
    data = {**report.to_dict(), "split": args.split, "fast_path": bool(args.fast_path), "run": str(run.path)}
    run.write_result(data)
    _emit(data, args.json, report.table() + f"\nper-episode results: {run.path / 'results.jsonl'}")
    return 0


COMMANDS = {"data": cmd_data, "sft": cmd_sft, "rl": cmd_rl, "eval": cmd_eval}


def main(argv: list[str] | None = None) -> int:
    from assistant_core.errors import PolicyUnavailableError
    from training.errors import TrainingError

    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TrainingError as error:
        print(f"phonebuddy train {args.command}: error: {error}", file=sys.stderr)
        return 2
    except PolicyUnavailableError as error:
        print(f"phonebuddy train {args.command}: the policy cannot run: {error}", file=sys.stderr)
        return 2
    except KeyError as error:  # UnknownTaskError (a KeyError) names close task ids
        from harness.phoneworld.tasks.base import UnknownTaskError

        if isinstance(error, UnknownTaskError):
            print(f"phonebuddy train {args.command}: error: {error}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
