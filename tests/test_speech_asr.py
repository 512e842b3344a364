"""Speech recognition: the filtering and confidence rules (pure), and the real multilingual Whisper base
model on English command clips spoken by espeak-ng.

Bounds, and why:
- English: espeak's American voice is clear; base transcribes "Open the settings and turn on airplane
  mode" exactly (measured: WER 0). We allow WER <= 0.25 (2 of 8 words) so a one-word slip on a slower
  machine/thread count does not fail, while a wrong or invented command still does.
- Mandarin: real speakers, not espeak-ng (whose Mandarin no recogniser hears well): see
  tests/test_speech_asr_zh.py (AISHELL-1 clips).
"""

from __future__ import annotations

import wave
from dataclasses import replace

import numpy as np
import pytest
from speech_fixtures import base_transcriber, espeak_clip, locator, save, session_dir, wer

from speech.asr import (
    AsrSettings,
    FasterWhisperTranscriber,
    Segment,
    SegmentFilter,
    TranscriptStatus,
    collapse_repeats,
    confidence_of,
    status_of,
    transcribe_file,
)
from speech.audio import read_wav, resample
from speech.messages import ModelMissingError
from speech.models import ModelLocator


def seg(text: str, *, lp: float = -0.3, nsp: float = 0.05, cr: float = 1.2, n: int = 8) -> Segment:
    return Segment(text, 0.0, 1.0, lp, nsp, cr, n)


# ----- pure rules ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [" Thank you for watching!", "Thanks for watching.", "Subtitles by the Amara.org community",
     "字幕由Amara.org社区提供", "请不吝点赞 订阅 转发 打赏支持明镜与点点栏目", "作词 作曲 作曲", "谢谢观看"],
)
def test_known_silence_hallucinations_are_dropped_even_when_confident(text):
    assert SegmentFilter().reason_to_drop(seg(text, lp=-0.1, nsp=0.01)) is not None


def test_a_real_command_is_kept():
    f = SegmentFilter(prompt="以下是普通话的句子。")
    assert f.reason_to_drop(seg("Open the settings and turn on airplane mode.")) is None
    assert f.reason_to_drop(seg("打开设置")) is None
    assert f.reason_to_drop(seg("Thank you", nsp=0.05)) is None  # said clearly: the user may mean it


def test_fillers_are_dropped_only_on_near_silence():
    assert SegmentFilter().reason_to_drop(seg(" You", lp=-0.8, nsp=0.73)) is not None
    assert SegmentFilter().reason_to_drop(seg("Thank you.", nsp=0.4)) is not None


def test_prompt_echo_repetition_and_no_speech_are_dropped():
    f = SegmentFilter(prompt="以下是普通话的句子。")
    assert "echo" in f.reason_to_drop(seg("大概是普通话的句子。"))
    assert f.reason_to_drop(seg("1,2,3,4,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5,5", cr=1.9)) is not None
    assert f.reason_to_drop(seg("火火火火火火火火火火火火火火火火火火火火")) is not None
    assert f.reason_to_drop(seg("hello", cr=3.1)) is not None
    assert f.reason_to_drop(seg("hello", lp=-0.9, nsp=0.8)) is not None
    assert f.reason_to_drop(seg("hello", lp=-1.8)) is not None


def test_confidence_and_status():
    settings = AsrSettings()
    sure = confidence_of([seg("a", lp=-0.1, nsp=0.02)], 1.0, True)
    unsure = confidence_of([seg("a", lp=-1.0, nsp=0.1)], 1.0, True)
    guessed_language = confidence_of([seg("a", lp=-0.1, nsp=0.02)], 0.4, False)
    assert 0.85 < sure <= 1.0 and unsure < 0.4 and guessed_language < sure
    assert confidence_of([], 1.0, True) == 0.0
    assert status_of("open settings", sure, settings) is TranscriptStatus.OK
    assert status_of("open settings", 0.3, settings) is TranscriptStatus.CONFIRM
    # Under repeat_below a short command is still read back ("Did you say open settings?"), never claimed
    # unheard (issue 29); a long sentence, or a short one below the floor, is asked again.
    assert status_of("open settings", 0.1, settings) is TranscriptStatus.CONFIRM
    assert status_of("下一步", 0.1, settings) is TranscriptStatus.CONFIRM
    assert status_of("open settings", 0.03, settings) is TranscriptStatus.REPEAT
    assert status_of("please open the settings and turn the wifi on", 0.1, settings) is TranscriptStatus.REPEAT
    assert status_of("", 0.99, settings) is TranscriptStatus.REPEAT


# ----- the real base model -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def asr() -> FasterWhisperTranscriber:
    return base_transcriber()


def test_english_command_detected_and_transcribed(asr):
    reference = "Open the settings and turn on airplane mode"
    result = asr.transcribe(espeak_clip(reference))  # language detected, not forced
    assert result.language == "en" and result.language_probability > 0.8
    assert wer(reference, result.text) <= 0.25, result.text
    assert result.status is TranscriptStatus.OK and result.confidence > 0.45
    assert result.timings.decode_s > 0 and result.timings.audio_s == pytest.approx(3.2, abs=0.5)


@pytest.mark.parametrize("language", [None, "zh", "en"])
def test_silence_gives_empty_text_and_a_request_to_repeat(asr, language):
    result = asr.transcribe(np.zeros(3 * 16_000, np.float32), language=language)
    assert result.text == "" and result.needs_repeat and result.confidence == 0.0
    assert result.prompt_for_user("zh") == "抱歉，我没听清。请再说一遍。"


def test_noise_gives_no_invented_command(asr):
    noise = (np.random.default_rng(0).standard_normal(3 * 16_000) * 0.1).astype(np.float32)
    result = asr.transcribe(noise)  # undetected language: raw Whisper loops "1,2,3,4,5,5,5..." here
    assert result.text == "" and result.needs_repeat


def test_clipped_recording_is_flagged_and_still_understood(asr):
    clean = espeak_clip("Call my daughter")
    loud = np.clip(clean * 8.0, -1.0, 1.0)  # hard clipping, as from a microphone gain set far too high
    path = save("clipped.wav", loud)
    assert read_wav(path).clipped
    result = transcribe_file(asr, path, language="en")
    assert result.clipped
    # Distorted audio is never acted on unheard: read back for confirmation (or asked again).
    assert result.status is not TranscriptStatus.OK, result
    assert result.text == "" or len(result.text.split()) <= 4, result.text  # no runaway invention


def test_wrong_rate_stereo_file_is_resampled(asr):
    clean = espeak_clip("Open the camera")
    at_44k = resample(clean, 16_000, 44_100)
    stereo = np.stack([at_44k, at_44k * 0.5], axis=1)
    path = session_dir() / "stereo44k.wav"
    pcm = (np.clip(stereo, -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44_100)
        w.writeframes(pcm.tobytes())
    loaded = read_wav(path)
    assert (loaded.source_rate, loaded.source_channels, loaded.sample_rate) == (44_100, 2, 16_000)
    result = transcribe_file(asr, path, language="en")
    assert wer("open the camera", result.text) <= 0.34, result.text


@pytest.mark.parametrize(("spoken", "name"), [("Open Zhihu", "Zhihu"), ("Open WeChat", "WeChat")])
def test_hotwords_bring_app_names_through(asr, spoken, name):
    clip = espeak_clip(spoken)
    plain = asr.transcribe(clip, language="en")
    hinted = asr.transcribe(clip, language="en", hotwords=[name, "Anna", "Settings"])
    assert name.lower() not in plain.text.lower(), plain.text  # measured: "Open J2", "Open reach out."
    assert name.lower() in hinted.text.lower(), hinted.text


def test_repeated_phrase_is_collapsed():
    assert collapse_repeats("Open J2 Open J2", "en") == "Open J2"
    assert collapse_repeats("打开相机。打开相机。", "zh") == "打开相机"
    assert collapse_repeats("Call Anna and Anna", "en") == "Call Anna and Anna"
    # A decode cut off by its token budget while restarting the phrase is a loop as well...
    looped = "Airplane mode is now on. I open the settings for you. Airplane mode is now on. I open the settings for"
    assert collapse_repeats(looped, "en", truncated=True) == "Airplane mode is now on. I open the settings for you."
    # ...and so is a complete decode that restarts a long sentence and repeats most of it: measured on this
    # machine, Whisper base stopped by itself (26 tokens of a 49-token budget) after "...settings for".
    assert collapse_repeats(looped, "en") == "Airplane mode is now on. I open the settings for you."
    # A short phrase said again in part is left alone when the decode was complete.
    assert collapse_repeats("Call Sophie Tang. Call Sophie", "en") == "Call Sophie Tang. Call Sophie"
    assert collapse_repeats("给妈妈", "zh") == "给妈妈" and collapse_repeats("妈妈", "zh") == "妈妈"
    assert collapse_repeats("Bye bye", "en") == "Bye bye"
    looped = "Airplane mode is now on. I open the settings for you. Airplane mode is now on. I open the settings for you. Airplane mod"
    assert collapse_repeats(looped, "en") == "Airplane mode is now on. I open the settings for you."


def test_missing_model_gives_a_bilingual_message(tmp_path):
    transcriber = FasterWhisperTranscriber(
        AsrSettings(model="small"), locator=ModelLocator(cache_dir=tmp_path, use_wheels=False)
    )
    with pytest.raises(ModelMissingError) as caught:
        transcriber.transcribe(np.zeros(16_000, np.float32))
    assert "small" in caught.value.text.en and str(tmp_path) in caught.value.text.en
    assert "语音模型" in caught.value.text.zh


def test_the_padded_30_s_window_path_used_for_long_audio(asr):
    # Audio longer than short_window_max_s goes through faster-whisper's own segmenting transcribe();
    # forcing that path on a short clip checks it gives the same command.
    padded = FasterWhisperTranscriber(replace(asr.settings, short_window=False), locator=asr.locator)
    padded._model = asr._model  # the same loaded model: this tests the decode path, not loading
    result = padded.transcribe(espeak_clip("Open the settings and turn on airplane mode"), language="en")
    assert wer("open the settings and turn on airplane mode", result.text) <= 0.25, result.text
    assert result.status is TranscriptStatus.OK


def test_model_is_loaded_once(asr):
    assert asr.load() == 0.0  # already loaded by the fixture
    assert asr.model_path == locator().cache_dir / "whisper" / "base"
