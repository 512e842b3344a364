"""Weights: found in a local folder or the Hugging Face cache without the network; clear bilingual
messages when they are missing (the tests run with HF_HUB_OFFLINE=1); disk-space check; the
`phonebuddy models` command line."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant_core.errors import PolicyUnavailableError
from assistant_core.policy.errors import PolicyUnavailable
from assistant_core.policy.profiles import get_profile
from assistant_core.policy.weights import check_disk_space, download_weights, locate_weights

ROOT = Path(__file__).resolve().parents[1]

pytest_plugins = ("policy_fixtures",)  # the shared tiny-model fixtures


def test_tests_run_offline():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_missing_weights_offline_give_the_clear_message(tmp_path):
    with pytest.raises(PolicyUnavailable) as info:
        locate_weights("phonebuddy-4b", cache_dir=tmp_path)
    error = info.value
    assert isinstance(error, PolicyUnavailableError)
    assert "no internet connection" in error.message.en
    assert "phonebuddy models download phonebuddy-4b" in error.message.en
    assert "没有网络" in error.message.zh and "phonebuddy models download phonebuddy-4b" in error.message.zh


def test_download_while_offline_is_refused_with_the_message(tmp_path):
    with pytest.raises(PolicyUnavailable, match="set to stay offline") as info:
        download_weights("phonebuddy-0.8b", cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())  # nothing was written
    assert "run the command again" in info.value.message.en and "再运行一次命令" in info.value.message.zh
    with pytest.raises(PolicyUnavailable) as info:  # from the wizard's button: press it again
        download_weights("phonebuddy-0.8b", cache_dir=tmp_path, again="button")
    assert "press Download again" in info.value.message.en and "再按一次“下载”" in info.value.message.zh
    assert "command" not in info.value.message.en


def test_a_local_folder_works_offline(tiny_qwen3_vl, tmp_path):
    assert locate_weights("qwen3-vl-4b", local_dir=tiny_qwen3_vl) == tiny_qwen3_vl
    (tmp_path / "junk").mkdir()
    with pytest.raises(PolicyUnavailable, match="does not hold a usable model"):
        locate_weights("qwen3-vl-4b", local_dir=tmp_path / "junk")


def test_a_cached_snapshot_is_found_without_the_network(tiny_qwen3_vl, tmp_path):
    """The layout huggingface_hub writes: models--ORG--NAME/{refs/main, snapshots/REV/...}."""
    repo = tmp_path / "models--Qwen--Qwen3-VL-4B-Instruct"
    revision = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(tiny_qwen3_vl, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    found = locate_weights("qwen3-vl-4b", cache_dir=tmp_path)
    assert found == repo / "snapshots" / revision
    assert download_weights("qwen3-vl-4b", cache_dir=tmp_path) == found  # offline: the complete copy is used


def test_disk_space_is_checked_before_downloading(tmp_path):
    huge = dataclasses.replace(get_profile("phonebuddy-4b"), download_gb=10**9)
    with pytest.raises(PolicyUnavailable) as info:
        check_disk_space(huge, tmp_path / "not" / "yet")
    assert "Not enough free disk space" in info.value.message.en and "磁盘空间不足" in info.value.message.zh
    check_disk_space(dataclasses.replace(huge, download_gb=0.0), tmp_path)


def run_models(*args):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "phonebuddy.cli", "models", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env=env)


def test_models_cli(tiny_qwen3_vl, tmp_path):
    missing = run_models("where", "phonebuddy-4b", "--cache-dir", str(tmp_path))
    assert missing.returncode == 1 and "phonebuddy models download phonebuddy-4b" in missing.stderr
    zh = run_models("download", "phonebuddy-4b", "--cache-dir", str(tmp_path), "--lang", "zh")
    assert zh.returncode == 1 and "不联网" in zh.stderr and "再运行一次命令" in zh.stderr
    here = run_models("where", "qwen3-vl-4b", "--dir", str(tiny_qwen3_vl))
    assert here.returncode == 0 and here.stdout.strip() == str(tiny_qwen3_vl)
    unknown = run_models("where", "gpt-99")
    assert unknown.returncode == 2 and "known" in unknown.stderr


def test_download_progress_reaches_the_callback():
    from assistant_core.policy.weights import _progress_class

    seen = []
    bar = _progress_class(seen.append)(total=2_000_000, unit="B", desc="model.safetensors", disable=True)
    bar.update(500_000)
    bar.update(1_500_000)
    bar.close()
    assert [(p.done_bytes, p.total_bytes) for p in seen] == [(500_000, 2_000_000), (2_000_000, 2_000_000)]
    assert seen[-1].fraction == 1.0 and seen[-1].description == "model.safetensors"
