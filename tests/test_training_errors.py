"""Bad input gets one clear error and leaves nothing that looks like a finished adapter."""

from __future__ import annotations

import json

import pytest

from tests.training_fixtures import TINY_PIXELS, build_tiny
from training.cli import main
from training.config import EvalConfig, RlConfig, SftConfig, load_config, with_overrides
from training.errors import BaseModelMissingError, ConfigError, DiskSpaceError, EmptyDatasetError
from training.runs import atomic_dir, is_complete_adapter
from training.sft import run_sft


def test_unknown_config_key_is_named_with_a_suggestion(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("base_model: m\ndataset: d\nlearning_rat: 0.1\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'learning_rat' \(did you mean 'learning_rate'\?\)"):
        load_config(path, SftConfig)
    json_path = tmp_path / "rl.json"
    json_path.write_text(json.dumps({"base_model": "m", "mix": {"single_app": 1, "games": 1}}))
    with pytest.raises(ConfigError, match="unknown categories"):
        load_config(json_path, RlConfig)


def test_config_types_and_values_are_checked(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("base_model: m\ndataset: d\nmax_steps: many\n")
    with pytest.raises(ConfigError, match="max_steps: expected a whole number"):
        load_config(path, SftConfig)
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(path, SftConfig)
    path.write_text("base_model: m\nbatch_size: 3\nnum_generations: 4\n")
    with pytest.raises(ConfigError, match="must divide"):
        load_config(path, RlConfig)
    with pytest.raises(ConfigError, match="missing required setting"):
        load_config(tmp_path / "c.yaml", SftConfig, base_model=None) if False else _missing(tmp_path)
    assert with_overrides(EvalConfig(), seeds=[5, 6]).seeds == (5, 6)


def _missing(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("{}")
    load_config(path, SftConfig)


def test_cli_reports_config_errors_with_exit_2(tmp_path, capsys):
    path = tmp_path / "sft.json"
    path.write_text(json.dumps({"base_model": "m", "dataset": "d", "lora_rank": 8}))
    assert main(["sft", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown setting 'lora_rank'" in err and "lora_r" in err and "Traceback" not in err


def test_empty_dataset_and_missing_base_model(tmp_path, capsys):
    with pytest.raises(EmptyDatasetError):
        run_sft(SftConfig(base_model=str(tmp_path), dataset=str(tmp_path / "none"), output=str(tmp_path / "runs")))
    assert not (tmp_path / "runs").exists()
    from training.data import oracle_examples, write_dataset

    data = write_dataset(tmp_path / "ds", list(oracle_examples(["SettingsTurnOnWifi"], (100,),
                                                               max_pixels=TINY_PIXELS)))
    with pytest.raises(BaseModelMissingError, match="base model not found"):
        run_sft(SftConfig(base_model=str(tmp_path / "no-model"), dataset=str(data), output=str(tmp_path / "runs")))
    assert main(["sft", "--base-model", str(tmp_path / "no-model"), "--dataset", str(data),
                 "--output", str(tmp_path / "runs"), "--no-progress"]) == 2
    assert "base model not found" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_rl_with_a_missing_base_model_or_no_tasks_says_so_and_starts_no_run(tmp_path, capsys):
    assert main(["rl", "--base-model", str(tmp_path / "no-model"), "--output", str(tmp_path / "runs"),
                 "--no-progress"]) == 2
    assert "base model not found" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["rl", "--base-model", str(tmp_path / "empty"), "--output", str(tmp_path / "runs"),
                 "--no-progress"]) == 2
    assert "holds no model" in capsys.readouterr().err
    tiny = build_tiny(tmp_path / "tiny")
    assert main(["rl", "--base-model", str(tiny), "--tasks", "NoSuchTask", "--output", str(tmp_path / "runs"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "NoSuchTask" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("name", ["sft_lora.yaml", "rl_real_mock.yaml", "eval_heldout.yaml"])
def test_the_shipped_configs_load(name):
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "training" / "configs" / name
    cls = {"sft": SftConfig, "rl": RlConfig, "eval": EvalConfig}[name.split("_")[0]]
    config = load_config(path, cls)
    if cls is RlConfig:
        assert abs(sum(config.mix.values()) - 1.0) < 1e-9 and config.batch_size % config.num_generations == 0
    if cls is EvalConfig:
        assert set(config.categories) == {"single_app", "cross_app", "mini_app", "safety"} and config.seeds


def test_atomic_dir_leaves_nothing_on_failure(tmp_path):
    final = tmp_path / "adapter"
    with pytest.raises(RuntimeError), atomic_dir(final) as tmp:
        (tmp / "adapter_model.safetensors").write_bytes(b"half")
        raise RuntimeError("crash while writing")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DiskSpaceError, match="not enough disk space"), atomic_dir(final, need_bytes=10,
                                                                                   free_bytes=lambda p: 5):
        pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_disk_full_before_and_during_training(tmp_path):
    from training.data import oracle_examples, write_dataset

    tiny = build_tiny(tmp_path / "tiny")
    data = write_dataset(tmp_path / "ds", list(oracle_examples(["SettingsTurnOnWifi"], (100,),
                                                               max_pixels=TINY_PIXELS)))
    config = SftConfig(base_model=str(tiny), dataset=str(data), output=str(tmp_path / "runs"), run_name="t",
                       max_steps=1, save_steps=0)
    with pytest.raises(DiskSpaceError, match="to start training"):
        run_sft(config, free_bytes=lambda p: 2**20)
    assert not (tmp_path / "runs").exists()

    # The disk fills up while training: the adapter cannot be written, and no adapter folder appears.
    def filling(path):
        return 2**40 if "runs" not in str(path) or not (tmp_path / "runs" / "sft-t" / "metrics.jsonl").exists() else 0

    with pytest.raises(DiskSpaceError, match="save the adapter"):
        run_sft(config, free_bytes=filling)
    run = tmp_path / "runs" / "sft-t"
    assert not (run / "adapter").exists() and not is_complete_adapter(run / "adapter")
    assert not [p for p in run.iterdir() if ".partial-" in p.name]
    assert not (run / "result.json").exists()
