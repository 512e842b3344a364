"""Speaking: sentence splitting, the real piper voice, a TTS -> Whisper round trip, stopping within 200 ms
(measured with a sink that plays in real time and records when each block arrives), queueing, repeat,
rate and volume, and the missing-Chinese-voice path (said, never silent)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from speech_fixtures import base_transcriber, locator, piper_engine, router, wer

from speech.asr import TranscriptStatus
from speech.audio import ASR_RATE, MemorySink, resample
from speech.messages import VoiceUnavailableError
from speech.models import ModelLocator
from speech.tts import (
    EspeakEngine,
    PiperEngine,
    Speaker,
    VoiceRouter,
    speak_to_array,
    split_sentences,
    text_language,
    to_pinyin,
)

RATE = 22_050


# ----- pure -------------------------------------------------------------------------------------------------------
def test_split_english_sentences_keeps_decimals_and_abbreviations():
    text = "Battery is at 3.5 percent. Call Dr. Wang now! Is that OK? Yes"
    assert split_sentences(text) == ["Battery is at 3.5 percent.", "Call Dr. Wang now!", "Is that OK?", "Yes"]


def test_split_chinese_and_mixed_sentences():
    assert split_sentences("正在打开设置。请稍等！好了吗？") == ["正在打开设置。", "请稍等！", "好了吗？"]
    assert split_sentences("已打开微信。Then say hello.\n下一步") == ["已打开微信。", "Then say hello.", "下一步"]
    assert split_sentences("  ...  ") == []


def test_text_language_and_pinyin():
    assert text_language("打开 WeChat") == "zh" and text_language("Open WeChat") == "en"
    assert to_pinyin("打开设置") == "da3 kai1 she4 zhi4"


# ----- the real piper voice -----------------------------------------------------------------------------------------
def test_piper_speaks_each_sentence_and_rate_changes_length():
    engine = piper_engine()
    sentence = "Opening the settings app for you."
    normal = engine.synthesize(sentence, "en")
    assert normal.sample_rate == RATE and normal.voice == "en_US-joe-medium"
    assert 1.0 < len(normal.samples) / RATE < 4.0
    assert np.max(np.abs(normal.samples)) > 0.3
    # Piper draws phoneme durations with noise (noise_w), so one synthesis varies by about +-10%; the
    # median of three per rate is steady. Rate 1.6 gives about 0.7 of the length (silences do not scale).
    normal_len = np.median([len(normal.samples)] + [len(engine.synthesize(sentence, "en").samples) for _ in range(2)])
    fast_len = np.median([len(engine.synthesize(sentence, "en", rate=1.6).samples) for _ in range(3)])
    assert fast_len < 0.8 * normal_len, (fast_len, normal_len)


def test_tts_round_trip_through_whisper():
    sentence = "Airplane mode is now on. I opened the settings for you."
    audio = speak_to_array(router(), sentence, "en")
    heard = base_transcriber().transcribe(resample(audio, RATE, ASR_RATE), language="en")
    assert wer(sentence, heard.text) <= 0.2, heard.text
    assert heard.status is TranscriptStatus.OK


# ----- the speaker ------------------------------------------------------------------------------------------------
@pytest.fixture
def speaker_and_sink():
    sink = MemorySink(RATE, realtime=True)  # write() takes as long as the audio lasts, like a sound card
    speaker = Speaker(router(), sink, block_s=0.05)
    yield speaker, sink
    speaker.close()


def test_stop_ends_playback_within_200_ms(speaker_and_sink):
    speaker, sink = speaker_and_sink
    item = speaker.say("This is a long announcement. It has several sentences. It goes on for a while. "
                       "You should never hear the end of it.", "en")
    deadline = time.monotonic() + 10
    while len(sink.arrivals) < 10 and time.monotonic() < deadline:  # half a second of audio has played
        time.sleep(0.01)
    assert len(sink.arrivals) >= 10
    stop_at = time.monotonic()
    speaker.stop()
    assert item.wait(1.0) and item.stopped
    time.sleep(0.3)  # anything still coming would arrive now
    late = [t - stop_at for t in sink.arrivals if t > stop_at]
    # A block already being written when stop() came may land; nothing may start 200 ms after stop.
    assert all(d < 0.2 for d in late), late
    assert sink.aborts and sink.aborts[0] - stop_at < 0.2
    played = len(sink.audio) / RATE
    assert played < 3.0  # far less than the whole text (about 8 s)


def test_queue_order_repeat_last_and_volume(speaker_and_sink):
    speaker, sink = speaker_and_sink
    sink.realtime = False
    speaker.volume = 0.25
    first = speaker.say("One.", "en")
    second = speaker.say("Two.", "en")
    assert first.wait(20) and second.wait(20)
    assert not first.stopped and first.first_audio_at < second.first_audio_at
    loud_once = len(sink.audio)
    assert np.max(np.abs(sink.audio)) <= 0.26
    again = speaker.repeat_last()
    assert again is not None and again.text == "Two." and again.wait(20)
    assert len(sink.audio) > loud_once
    speaker.rate = 9.0
    assert speaker.rate == 2.0  # clamped


def test_stop_drops_queued_utterances(speaker_and_sink):
    speaker, sink = speaker_and_sink
    speaker.say("First sentence that is being spoken now.", "en")
    queued = speaker.say("This must never be heard.", "en")
    time.sleep(0.3)
    speaker.stop()
    assert queued.wait(2) and queued.stopped and queued.first_audio_at is None
    assert speaker.wait_idle(2)


# ----- Chinese -------------------------------------------------------------------------------------------------------
def _without_chinese_voice() -> VoiceRouter:
    # The real English voice from its wheel; no Chinese voice anywhere (the case on every machine here).
    engine = PiperEngine(locator=ModelLocator(cache_dir=locator().cache_dir / "no-zh"))
    engine._loaded.update(piper_engine()._loaded)  # reuse the loaded joe voice: same files, saves a load
    return VoiceRouter(engine, fallback=EspeakEngine())


def test_missing_chinese_voice_is_announced_in_chinese_then_read_by_espeak():
    # No Kokoro, no Chinese piper voice: a Chinese user hears the notice in Chinese, never English.
    r = _without_chinese_voice()
    plans = r.plan("正在打开设置。请稍等。")
    assert plans[0].lang == "zh" and plans[0].text.startswith("没有安装中文语音")
    assert [p.text for p in plans[1:]] == ["正在打开设置。", "请稍等。"]
    assert all(isinstance(p.engine, EspeakEngine) and p.lang == "zh" for p in plans)
    # Said once per language, not before every sentence.
    assert not any("没有安装" in p.text for p in r.plan("好的。"))
    audio = speak_to_array(_without_chinese_voice(), "正在打开设置。")
    assert len(audio) / RATE > 2.0 and np.sqrt(np.mean(audio**2)) > 0.02  # the notice and the Chinese: not silence


def test_chinese_is_never_handed_to_the_english_voice():
    r = VoiceRouter(_without_chinese_voice().piper, fallback=EspeakEngine(binary="no-such-espeak"))
    with pytest.raises(VoiceUnavailableError):
        r.plan("打开设置。")


def test_nothing_at_all_to_speak_with_is_a_clear_error():
    r = VoiceRouter(PiperEngine(locator=ModelLocator(cache_dir=locator().cache_dir / "empty", use_wheels=False)),
                    fallback=EspeakEngine(binary="no-such-espeak"))
    with pytest.raises(VoiceUnavailableError) as caught:
        r.plan("Hello.")
    assert caught.value.text.zh


def test_a_chinese_piper_voice_in_the_cache_is_found_and_used(tmp_path):
    # Stand-in for zh_CN-huayan-medium (an espeak 'cmn' voice): the joe network with a cmn config, placed
    # where a download would put it. It proves the lookup and routing, not the voice's quality.
    joe = locator().piper_voice("en_US-joe-medium")
    folder = tmp_path / "piper" / "zh_CN-huayan-medium"
    folder.mkdir(parents=True)
    (folder / "zh_CN-huayan-medium.onnx").symlink_to(joe.model)
    config = json.loads(joe.config.read_text())
    config["espeak"]["voice"] = "cmn"
    (folder / "zh_CN-huayan-medium.onnx.json").write_text(json.dumps(config))
    engine = PiperEngine(locator=ModelLocator(cache_dir=tmp_path))
    plans = VoiceRouter(engine, fallback=EspeakEngine()).plan("正在打开设置。")
    assert len(plans) == 1 and plans[0].engine is engine and plans[0].lang == "zh"
    chunk = engine.synthesize("正在打开设置。", "zh")
    assert chunk.voice == "zh_CN-huayan-medium" and len(chunk.samples) / chunk.sample_rate > 0.5


def test_speaker_reports_errors_without_crashing():
    errors = []
    r = VoiceRouter(PiperEngine(locator=ModelLocator(cache_dir=locator().cache_dir / "empty2", use_wheels=False)),
                    fallback=EspeakEngine(binary="no-such-espeak"))
    sink = MemorySink(RATE)
    speaker = Speaker(r, sink, on_error=errors.append)
    item = speaker.say("Hello.")
    assert item.wait(5) and isinstance(item.error, VoiceUnavailableError) and errors
    speaker.close()


def test_a_long_first_sentence_is_split_at_its_first_comma():
    from speech.tts import first_clause_split

    assert first_clause_split(["I opened the settings for you, and nothing else was changed.", "Done."]) == [
        "I opened the settings for you,", "and nothing else was changed.", "Done."]
    assert first_clause_split(["Yes, done."]) == ["Yes, done."]  # short: kept whole
    assert first_clause_split(["我已经为您打开了设置，其他什么都没有改变。"]) == ["我已经为您打开了设置，", "其他什么都没有改变。"]
    assert first_clause_split([]) == []
