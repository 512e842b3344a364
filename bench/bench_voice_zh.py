"""Voices side by side: Kokoro Chinese (female, male), piper English and espeak-ng (Chinese and English),
then Chinese recognition on real speakers.

    .venv/bin/python bench/bench_voice_zh.py [--repeats 3] [--threads 2]

Per voice (never asserts, prints a table):
- first audio: `Speaker.say(reply)` until the first 50 ms block reaches a sink (text front end, first-clause
  split and synthesis of the first clause included; the model already loaded). Goal for a short Chinese
  reply on this 2-core machine: within 1 s.
- RTF: synthesis time / audio length over the whole reply (below 1 = faster than real time).
- round trip: the reply spoken, then transcribed by Whisper base with our settings; CER (Chinese
  characters, after the text front end on both sides) or WER (English words).
Then Kokoro's Chinese front end before/after (misaki's legacy path vs ours with tone sandhi and polyphone
fixes): round-trip CER on short everyday replies and on the test's twelve sentences. Then real Mandarin (the AISHELL-1 clips in the s3tokenizer wheel, fetched like the tests do): CER and decode
time for our Chinese settings (language zh, Simplified prompt, beam 5) beside detection, no prompt, beam 1.

CPU load from other processes distorts every figure, so the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

REPLIES = {
    "zh": "好的，已经为您打开设置。今天下午3:30有一个会议，电量还剩45%。",
    "en": "Done, I opened the settings for you. You have a meeting at 3:30 pm, and the battery is at 45%.",
}
FIRST_AUDIO_GOAL_S = 1.0


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def first_audio(router, text: str, lang: str, repeats: int) -> float:
    from speech.audio import MemorySink
    from speech.tts import Speaker

    times = []
    for _ in range(repeats):
        sink = MemorySink(22_050)
        speaker = Speaker(router, sink)
        start = time.monotonic()
        item = speaker.say(text, lang)
        while not sink.arrivals and not item.done.is_set():
            time.sleep(0.002)
        times.append((sink.arrivals[0] if sink.arrivals else time.monotonic()) - start)
        speaker.stop()
        speaker.close()
    return statistics.median(times)


def rtf_and_audio(router, text: str, lang: str, repeats: int):
    import numpy as np

    from speech.asr import ASR_RATE
    from speech.audio import resample

    rtfs, audio = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        chunks = list(router.synthesize(text, lang))
        took = time.perf_counter() - start
        seconds = sum(len(c.samples) / c.sample_rate for c in chunks)
        rtfs.append(took / max(seconds, 1e-6))
        audio = np.concatenate([resample(c.samples, c.sample_rate, ASR_RATE) for c in chunks])
    return statistics.median(rtfs), audio


def bench_voices(repeats: int) -> None:
    from speech_fixtures import base_transcriber, cer_heard_zh, kokoro_engine, piper_engine, wer

    from speech.tts import EspeakEngine, VoiceRouter

    espeak = EspeakEngine()
    voices = [
        ("Kokoro zh female (zf_xiaoxiao)", "zh", lambda: VoiceRouter(piper_engine(), espeak, preferred={"zh": kokoro_engine("female")})),
        ("Kokoro zh male (zm_yunxi)", "zh", lambda: VoiceRouter(piper_engine(), espeak, preferred={"zh": kokoro_engine("male")})),
        ("espeak-ng zh (pinyin)", "zh", lambda: VoiceRouter(espeak, espeak)),
        ("piper en (en_US-joe-medium)", "en", lambda: VoiceRouter(piper_engine(), espeak)),
        ("espeak-ng en-us", "en", lambda: VoiceRouter(espeak, espeak)),
    ]
    print(f"\nVoices ({load()}); first-audio goal for Chinese: {FIRST_AUDIO_GOAL_S:.1f} s")
    print(f"{'voice':34} {'first audio s':>13} {'RTF':>6} {'round trip':>16}")
    for name, lang, make in voices:
        router = make()
        list(router.synthesize("你好。" if lang == "zh" else "Hello.", lang))  # load and warm up
        first = first_audio(router, REPLIES[lang], lang, repeats)
        rtf, audio = rtf_and_audio(router, REPLIES[lang], lang, repeats)
        heard = base_transcriber().transcribe(audio, language=lang).text
        if lang == "zh":
            edits, chars = cer_heard_zh(REPLIES[lang], heard)
            score = f"CER {edits / chars:.3f}"
        else:
            from speech.textnorm import normalize

            score = f"WER {wer(normalize(REPLIES[lang], 'en'), normalize(heard, 'en')):.3f}"
        print(f"{name:34} {first:13.2f} {rtf:6.2f} {score:>16}   heard: {heard}")


# Short everyday replies, where the round trip lost words (闹钟设好了 -> 那种事好了, 晚点到 -> 五文点到).
SHORT_ZH = ["闹钟设好了。", "我晚点到。", "晚点到。", "好的。", "你好。", "马上就好。", "稍等一下。", "已经发送了。",
            "手机没电了。", "音量调大了。", "找不到这个人。", "我很好。", "已经关掉了。", "请再说一遍。", "买好了。",
            "不用了。", "一会儿见。", "还有五分钟。", "我想打电话。", "我不知道。", "长按电源键。", "亮度调高了。"]


def bench_short_front_end() -> None:
    """Round-trip CER of SHORT_ZH (and the test's twelve sentences) with misaki's plain legacy front end
    (before) and ours (tone sandhi, polyphone fixes), for both Kokoro voices."""
    from speech_fixtures import base_transcriber, cer_heard_zh, kokoro_engine, zh_router
    from test_speech_kokoro import ROUND_TRIP

    from speech.asr import ASR_RATE
    from speech.tts import speak_to_array

    print(f"\nKokoro's Chinese front end, round trip through Whisper base ({load()})")
    from app.voice import HOTWORDS

    print(f"{'voice':8} {'sentences':22} {'before':>7} {'after':>7} {'+words':>7}  (+words: the app's Chinese hotwords)")
    for voice in ("female", "male"):
        engine, router = kokoro_engine(voice), zh_router(voice)  # the product's path: text front end first
        for label, sentences in ((f"{len(SHORT_ZH)} short replies", SHORT_ZH), (f"{len(ROUND_TRIP)} test sentences", ROUND_TRIP)):
            scores = []
            for sandhi, words in ((False, ()), (True, ()), (True, HOTWORDS["zh"])):
                engine._g2p.use_sandhi = sandhi
                edits = chars = 0
                for sentence in sentences:
                    audio = speak_to_array(router, sentence, "zh", sample_rate=ASR_RATE)  # as the test does
                    text = base_transcriber().transcribe(audio, language="zh", hotwords=words).text
                    e, n = cer_heard_zh(sentence, text)
                    edits, chars = edits + e, chars + n
                scores.append(edits / chars)
            engine._g2p.use_sandhi = True
            print(f"{voice:8} {label:22} {scores[0]:7.3f} {scores[1]:7.3f} {scores[2]:7.3f}", flush=True)


def bench_real_clips(threads: int) -> None:
    from speech_fixtures import aishell_clips, edit_distance, locator

    from speech.asr import AsrSettings, FasterWhisperTranscriber

    clips = aishell_clips()
    base = AsrSettings(model="base", device="cpu", cpu_threads=threads)
    variants = [
        ("zh + prompt + beam 5 (ours)", base, "zh"),
        ("detected language", base, None),
        ("zh, no prompt", replace(base, zh_prompt=""), "zh"),
        ("zh + prompt, beam 1", replace(base, beam_size=1), "zh"),
    ]
    print(f"\nReal Mandarin: {len(clips)} AISHELL-1 clips, Whisper base ({load()})")
    print(f"{'settings':30} {'CER':>6} {'decode s/clip':>14}")
    for name, settings, lang in variants:
        transcriber = FasterWhisperTranscriber(settings, locator=locator())
        transcriber.load()
        edits = chars = 0
        times = []
        for samples, transcript in clips.values():
            result = transcriber.transcribe(samples, language=lang)
            hyp = "".join(ch for ch in result.text if "\u4e00" <= ch <= "\u9fff")
            edits += edit_distance(transcript, hyp)
            chars += len(transcript)
            times.append(result.timings.decode_s)
        print(f"{name:30} {edits / chars:6.3f} {statistics.mean(times):14.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-voices", action="store_true")
    parser.add_argument("--skip-clips", action="store_true")
    parser.add_argument("--skip-front-end", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not args.skip_voices:
        bench_voices(args.repeats)
    if not args.skip_front_end:
        bench_short_front_end()
    if not args.skip_clips:
        bench_real_clips(args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
