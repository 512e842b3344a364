"""The text front end before every voice (speech.textnorm): phone numbers, codes and card numbers digit by
digit in groups, money, percentages, times and dates as said, English names kept in Chinese, nothing
dropped; the speak path applies it; and our own voice reading numbers is heard back digit for digit by
our own recogniser."""

from __future__ import annotations

import re

import pytest
from speech_fixtures import base_transcriber, edit_distance, router, words

from speech.audio import ASR_RATE, resample
from speech.textnorm import (
    digits_in_transcript,
    en_cardinal,
    en_ordinal,
    group_digits,
    normalize,
    spoken_digits,
    zh_cardinal,
)
from speech.tts import speak_to_array


# ----- numbers --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "en", "zh"), [
    (0, "zero", "零"), (12, "twelve", "十二"), (42, "forty-two", "四十二"), (105, "one hundred five", "一百零五"),
    (110, "one hundred ten", "一百一十"), (1010, "one thousand ten", "一千零一十"),
    (10010, "ten thousand ten", "一万零一十"), (12345, "twelve thousand three hundred forty-five", "一万二千三百四十五"),
    (100_000_000, "one hundred million", "一亿"), (300_050_000, "three hundred million fifty thousand", "三亿零五万"),
])
def test_cardinals(n, en, zh):
    assert en_cardinal(n) == en and zh_cardinal(n) == zh


def test_ordinals_and_grouping():
    assert [en_ordinal(n) for n in (1, 2, 3, 12, 14, 20, 21, 33)] == [
        "first", "second", "third", "twelfth", "fourteenth", "twentieth", "twenty-first", "thirty-third"]
    assert group_digits("13800138000") == ["138", "0013", "8000"]
    assert group_digits("482913") == ["482", "913"] and group_digits("1234") == ["1234"]
    assert group_digits("6222021001123456") == ["6222", "0210", "0112", "3456"]


# ----- English ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "said"), [
    ("Call 13800138000 now.", "Call one three eight, zero zero one three, eight zero, zero zero now."),
    ("My number is +86 138 0013 8000.",
     "My number is plus eight six, one three eight, zero zero one three, eight zero, zero zero."),
    ("Call (555) 123-4567 please", "Call five, five five, one two three, four five six seven please"),
    ("Your code is 482913.", "Your code is four eight two, nine one three."),
    ("PIN: 1234", "PIN: one two three four"),
    ("The card ending in 3456", "The card ending in three four five six"),
    ("Card 6222 0210 0112 3456", "Card six two, two two, zero two one zero, zero one one two, three four five six"),
    ("That costs $12.50.", "That costs twelve dollars and fifty cents."),
    ("$1.01 left", "one dollar and one cent left"),
    ("Pay ¥200", "Pay two hundred yuan"),
    ("Battery at 45%", "Battery at forty-five percent"),
    ("Down 3.5% today", "Down three point five percent today"),
    ("Alarm at 7:30 pm.", "Alarm at seven thirty p m."),
    ("Wake me at 7:05", "Wake me at seven oh five"),
    ("at 3.30 p.m. today", "at three thirty p m today"),
    ("version 3.30 now", "version three point three zero now"),
    ("Wake me at 7 am", "Wake me at seven a m"), ("at 11pm", "at eleven p m"),
    ("It is 7:00", "It is seven o'clock"),
    ("on 2025-03-14", "on March fourteenth, twenty twenty-five"),
    ("born in 1998", "born in nineteen ninety-eight"),
    ("the 1st and 23rd", "the first and twenty-third"),
    ("I have 2 apples and 1,234 pears", "I have two apples and one thousand two hundred thirty-four pears"),
    ("You walked 12345 steps", "You walked twelve thousand three hundred forty-five steps"),
    ("20000 people", "twenty thousand people"),
    ("Open WhatsApp & Gmail", "Open WhatsApp and Gmail"),
])
def test_english_as_people_say_it(text, said):
    assert normalize(text, "en") == said


# ----- Chinese ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "said"), [
    ("打电话给13800138000。", "打电话给一三八，零零一三，八零，零零。"),
    ("电话13800138000的主人", "电话一三八，零零一三，八零，零零的主人"),
    ("验证码是482913，请勿泄露。", "验证码是四八二，九一三，请勿泄露。"),
    ("尾号3456的卡", "尾号三四五六的卡"),
    ("卡号6222 0210 0112 3456", "卡号六二，二二，零二一零，零一一二，三四五六"),
    ("一共¥12.50元", "一共十二元五角"),
    ("花了30元", "花了三十元"),
    ("付 ¥0.05", "付 五分"),
    ("转账2000元", "转账两千元"),
    ("电量45%", "电量百分之四十五"),
    ("下降3.5%", "下降百分之三点五"),
    ("下午3:05开会", "下午三点零五分开会"),
    ("明天7:30叫我", "明天七点半叫我"),
    ("7pm开会", "下午七点开会"),
    ("2:00出发", "两点出发"),
    ("2025-03-14", "二零二五年三月十四日"),
    ("2025年3月14日", "二零二五年三月十四日"),
    ("3月14号见", "三月十四号见"),
    ("我有2个苹果", "我有两个苹果"),
    ("第3页", "第三页"),
    ("两万人", "两万人"),
    ("20000人", "两万人"),
    ("温度25℃", "温度二十五度"),
])
def test_chinese_as_people_say_it(text, said):
    assert normalize(text, "zh") == said


def test_english_words_and_app_names_in_chinese_are_kept_and_nothing_is_dropped():
    text = "打开WiFi和微信，然后给Tom发消息，用Alipay付¥25.80，验证码 4829。"
    said = normalize(text, "zh")
    assert said == "打开WiFi和微信，然后给Tom发消息，用Alipay付二十五元八角，验证码 四八二九。"
    # Every letter and every Chinese character of the input is still there, in order.
    rest = iter(said)
    assert all(ch in rest for ch in re.sub(r"[^A-Za-z\u4e00-\u9fff]", "", text))


def test_normalize_never_drops_words_it_does_not_know():
    for text, lang in (("Öffne Spotify — 😀 ok?", "en"), ("请打开 TikTok（抖音）！", "zh"), ("", "en")):
        assert normalize(text, lang) == text.strip()


def test_spoken_digits_and_transcript_digits():
    assert spoken_digits("one three eight, 0013, 八零零零 幺") == "138001380001"
    assert digits_in_transcript("打电话给一三八零零一三八零零零") == "打电话给13800138000"
    assert digits_in_transcript("9,5,5,8") == "9558"
    assert digits_in_transcript("１３８ 0013 8000") == "13800138000"
    assert digits_in_transcript("138-0013-8000") == "13800138000"
    # Words that only look like digits stay words; dates stay dates.
    for text in ("一二线城市", "十一点一刻", "一五一十", "2025-03-14", "三三两两"):
        assert digits_in_transcript(text) == text


# ----- the speak path applies it --------------------------------------------------------------------------------
def test_the_speak_path_normalises_every_sentence_for_every_engine():
    plans = router().plan("Your code is 482913. Call 13800138000 now.", "en")
    assert [p.text for p in plans] == [
        "Your code is four eight two, nine one three.", "Call one three eight, zero zero one three, eight zero, zero zero now."]
    zh_plans = router().plan("验证码是482913。", "zh")
    assert any(p.text == "验证码是四八二，九一三。" for p in zh_plans), [p.text for p in zh_plans]


# ----- round trip: our voice says digits, our recogniser hears the same digits ----------------------------------
EN_NUMBERS = [
    ("Call 13800138000 now.", "13800138000"),
    ("Your verification code is 482913.", "482913"),
    ("The card ending in 3456 was charged.", "3456"),
    ("My number is 555 123 4567.", "5551234567"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("text", "digits"), EN_NUMBERS)
def test_english_voice_reads_numbers_back_digit_for_digit(text, digits):
    """Piper samples its voice (VITS noise: two readings of one sentence differ), and Whisper base miscounts a
    digit on some readings: 'Call 13800138000 now.' came back right on 10 of 12 readings on an AVX-512 machine,
    '555 123 4567' on 12 of 12 there (and under an emulated AVX2 CPU) but wrong once on CI's AVX2 machine
    (four fives). So the claim tested is a rate, not one draw: at least half of six fresh readings come back
    digit for digit (three right before four wrong; at 10 of 12 a reading, that fails about once in 110 runs,
    where one reading failed once in six)."""
    right, wrong = 0, []
    while right < 3 and len(wrong) < 4:
        audio = speak_to_array(router(), text, "en")
        heard = base_transcriber().transcribe(resample(audio, 22_050, ASR_RATE), language="en").text
        if spoken_digits(heard) == digits:
            right += 1
        else:
            wrong.append(heard)
    assert right == 3, (normalize(text, "en"), wrong)


EN_ROUND_TRIP = [
    "I opened the settings for you.", "You have a meeting at 3:30 pm today.", "The battery is at 45%.",
    "Your electricity bill this month is $128.", "Should I send the message on WhatsApp?",
    "I turned on Wi-Fi and Bluetooth.", "Your parcel is waiting in the locker downstairs.",
    "The alarm for 7 am tomorrow is set.", "I did not catch that, please say it again.", "March 14th is a Friday.",
    "Do you want to pay with PayPal?", "The volume is now at the maximum.",
]


@pytest.mark.slow
def test_english_tts_whisper_round_trip_on_varied_sentences():
    """Piper reads twelve replies (numbers, money, times, a date, app names); Whisper base hears them back.
    Both sides go through the front end before comparing (Whisper writes '3.30 p.m.' for what was said
    'three thirty p m'); hyphens are ignored ('Wi-Fi' = 'wifi')."""
    edits = total = 0
    lines = []
    for sentence in EN_ROUND_TRIP:
        audio = speak_to_array(router(), sentence, "en", sample_rate=ASR_RATE)
        heard = base_transcriber().transcribe(audio, language="en").text
        ref, hyp = (words(normalize(t, "en").replace("-", "")) for t in (sentence, heard))
        edits, total = edits + edit_distance(ref, hyp), total + len(ref)
        lines.append(f"{sentence} -> {heard}")
    rate = edits / total
    assert rate <= 0.10, f"WER {rate:.3f} over {total} words\n" + "\n".join(lines)
    print(f"piper en: WER {rate:.3f} over {total} words")
