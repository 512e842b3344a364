"""`phonebuddy speech ...` end to end, in-process through phonebuddy.cli's dispatcher, with the real models."""

from __future__ import annotations

import json
import wave

import numpy as np
import pytest
from speech_fixtures import locator, save, wer

from phonebuddy.cli import main as phonebuddy


@pytest.fixture(autouse=True)
def model_cache(monkeypatch):
    # The session's model cache, where Whisper base has already been joined from its wheels.
    monkeypatch.setenv("PHONEBUDDY_MODEL_DIR", str(locator().cache_dir))
    locator().whisper("base")


def test_say_to_a_file_then_transcribe_it_as_json(tmp_path, capsys):
    out = tmp_path / "said.wav"
    assert phonebuddy(["speech", "say", "Please open the camera.", "--out", str(out)]) == 0
    with wave.open(str(out)) as w:
        assert w.getframerate() == 22_050 and w.getnframes() / 22_050 > 1.0
    capsys.readouterr()
    assert phonebuddy(["speech", "transcribe", str(out), "--language", "en", "--model", "base", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert wer("please open the camera", result["text"]) <= 0.25, result["text"]
    assert result["language"] == "en" and 0.0 < result["confidence"] <= 1.0
    assert result["status"] == "ok" and result["needs_repeat"] is False and result["message"] is None
    assert result["file"]["sample_rate"] == 22_050  # resampled to 16 kHz on the way in
    assert {"load_s", "decode_s", "audio_s", "rtf", "total_s"} <= set(result["timings"])


def test_silence_file_asks_to_repeat(capsys):
    path = save("cli-silence.wav", np.zeros(32_000, np.float32))
    assert phonebuddy(["speech", "transcribe", str(path), "--json", "--ui-lang", "zh"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["text"] == "" and result["needs_repeat"] is True and result["message"] == "抱歉，我没听清。请再说一遍。"


def test_missing_file_and_missing_model_are_clear_messages(tmp_path, capsys):
    assert phonebuddy(["speech", "transcribe", str(tmp_path / "nope.wav")]) == 1
    assert "nope.wav" in capsys.readouterr().err
    path = save("cli-short.wav", np.zeros(16_000, np.float32))
    assert phonebuddy(["speech", "--ui-lang", "zh", "transcribe", str(path), "--model", "large-v3"]) == 1
    assert "large-v3" in capsys.readouterr().err


def test_say_without_out_needs_a_speaker(capsys):
    import sounddevice as sd

    has_output = any(d["max_output_channels"] > 0 for d in sd.query_devices())
    code = phonebuddy(["speech", "say", "Hello."])
    if has_output:
        assert code == 0
    else:
        assert code == 1 and "--out" in capsys.readouterr().err


def test_earcon_to_file(tmp_path, capsys):
    out = tmp_path / "ok.wav"
    assert phonebuddy(["speech", "earcon", "success", "--out", str(out)]) == 0
    with wave.open(str(out)) as w:
        assert 0.2 < w.getnframes() / w.getframerate() < 0.6
