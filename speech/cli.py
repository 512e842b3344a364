"""`phonebuddy speech ...`: transcribe a WAV file, speak a sentence, play an earcon.

    phonebuddy speech transcribe FILE.wav [--language zh|en] [--model base] [--hotword NAME ...] [--json]
    phonebuddy speech say "TEXT" [--lang en|zh|...] [--out FILE.wav] [--rate 1.0] [--volume 1.0]
    phonebuddy speech earcon NAME [--out FILE.wav]
    phonebuddy speech recognisers [--measure] [--choose NAME] [--json]
        the recogniser sizes with their published accuracy, their speed measured on this computer and the
        one recommended here (speech.recognisers); --measure times each size first (random weights at real
        size, a minute or more); fetch one with `phonebuddy speech transcribe FILE --model small --download`

Exit codes: 0 done; 1 a speech problem with a clear message (missing model, no audio device, unreadable
file); 2 bad arguments. Heavy imports happen inside the commands.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from assistant_core import languages as langs


def _parser() -> argparse.ArgumentParser:
    # Shared options, accepted before or after the command word (SUPPRESS: a later default does not
    # overwrite an earlier value).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model-dir", type=Path, default=argparse.SUPPRESS, help="a folder holding speech models")
    common.add_argument("--download", action="store_true", default=argparse.SUPPRESS,
                        help="download a missing model (needs internet)")
    common.add_argument("--ui-lang", choices=langs.choices(), default=argparse.SUPPRESS, help="language of messages")
    parser = argparse.ArgumentParser(
        prog="phonebuddy speech", description="Listen to a WAV file or speak text.", parents=[common]
    )
    parser.set_defaults(model_dir=None, download=False, ui_lang="en")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("transcribe", help="transcribe a WAV file", parents=[common])
    t.add_argument("file", type=Path)
    t.add_argument("--language", choices=langs.whisper_codes(), default=None, help="force the language (default: detect)")
    t.add_argument("--model", default="base", help="tiny, tiny.en, base, small, ..., large-v3-turbo, or a folder")
    t.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    t.add_argument("--beam-size", type=int, default=5)
    t.add_argument("--hotword", action="append", default=[], help="an app or contact name (repeatable)")
    t.add_argument("--traditional", action="store_true", help="keep Traditional Chinese characters")
    t.add_argument("--json", action="store_true", help="print one JSON object")

    s = sub.add_parser("say", help="speak text (or write it to a WAV file)", parents=[common])
    s.add_argument("text")
    s.add_argument("--lang", choices=langs.choices(), default=None, help="default: from the characters")
    s.add_argument("--out", type=Path, default=None, help="write a WAV file instead of playing")
    s.add_argument("--rate", type=float, default=1.0)
    s.add_argument("--volume", type=float, default=1.0)
    s.add_argument("--voice-en", default=None, help="piper voice name or .onnx path for English")
    s.add_argument("--voice-zh", default=None, help="Chinese voice: female or male (Kokoro), or a piper voice name / .onnx path")

    r = sub.add_parser("recognisers", help="list recogniser sizes, measure their speed here", parents=[common])
    r.add_argument("--measure", action="store_true", help="time each size on this computer first")
    r.add_argument("--sizes", default="small,large-v3-turbo", help="sizes to measure (with --measure)")
    r.add_argument("--json", action="store_true", help="print one JSON object")

    e = sub.add_parser("earcon", help="play or save an earcon", parents=[common])
    e.add_argument("name", choices=["listening", "heard", "working", "confirm", "success", "error"])
    e.add_argument("--out", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from speech.messages import SpeechError
    from speech.models import ModelLocator, default_cache_dir

    locator = ModelLocator(
        cache_dir=default_cache_dir(), explicit_dir=args.model_dir, allow_download=args.download,
        progress=_print_progress if args.download else None, again="command",
    )
    try:
        if args.command == "transcribe":
            return _transcribe(args, locator)
        if args.command == "say":
            return _say(args, locator)
        if args.command == "recognisers":
            return _recognisers(args, locator)
        return _earcon(args)
    except SpeechError as error:
        print(f"phonebuddy speech: {error.text.get(args.ui_lang)}", file=sys.stderr)
        return 1


def _print_progress(progress) -> None:
    from speech.messages import MESSAGES

    line = MESSAGES.get(
        "download_progress", "en", name=progress.name, done=progress.done_bytes >> 20, total=progress.total_bytes >> 20
    )
    print(f"\r{line}", end="", file=sys.stderr, flush=True)


def _transcribe(args, locator) -> int:
    from speech.asr import AsrSettings, FasterWhisperTranscriber
    from speech.audio import read_wav

    started = time.perf_counter()
    loaded = read_wav(args.file)
    read_s = time.perf_counter() - started
    settings = AsrSettings(
        model=args.model, device=args.device, language=args.language, beam_size=args.beam_size,
        simplified=not args.traditional,
    )
    transcriber = FasterWhisperTranscriber(settings, locator=locator)
    result = transcriber.transcribe(loaded.samples, language=args.language, hotwords=args.hotword)
    clipped = result.clipped or loaded.clipped
    if args.json:
        out = result.to_dict()
        out["clipped"] = clipped
        out["file"] = {"path": str(args.file), "sample_rate": loaded.source_rate, "channels": loaded.source_channels}
        out["timings"]["read_s"] = round(read_s, 3)
        out["timings"]["total_s"] = round(time.perf_counter() - started, 3)
        out["model"] = args.model
        prompt = result.prompt_for_user(args.ui_lang)
        out["message"] = prompt
        print(json.dumps(out, ensure_ascii=False))
    else:
        from speech.messages import MESSAGES

        if clipped:
            print(MESSAGES.get("wav_clipped", args.ui_lang), file=sys.stderr)
        print(result.text if result.text else MESSAGES.get("not_heard", args.ui_lang))
        print(
            f"[{result.language} p={result.language_probability:.2f} confidence={result.confidence:.2f} "
            f"status={result.status} decode={result.timings.decode_s:.2f}s rtf={result.timings.rtf:.2f}]",
            file=sys.stderr,
        )
    return 0


def _say(args, locator) -> int:
    from speech.tts import PiperEngine, Speaker, default_router, default_voices, speak_to_array

    voices = default_voices()  # each registered language's voice (assistant_core.languages)
    if args.voice_en:
        voices["en"] = args.voice_en
    # --voice-zh: a piper voice for Chinese, else Kokoro's 'female' / 'male' (or a Kokoro voice name).
    piper_zh = bool(args.voice_zh) and (args.voice_zh.endswith(".onnx") or "-" in args.voice_zh)
    if piper_zh:
        voices["zh"] = args.voice_zh
    router = default_router(locator=locator, zh_voice=None if piper_zh else args.voice_zh)
    router.piper = PiperEngine(locator=locator, voices=voices)
    if piper_zh:
        router.preferred.pop("zh", None)
    if args.out is not None:
        from speech.audio import write_wav

        samples = speak_to_array(router, args.text, args.lang, rate=args.rate, volume=args.volume)
        write_wav(args.out, samples, 22_050)
        print(f"{args.out} ({len(samples) / 22_050:.2f} s)")
        return 0
    from speech.audio import SoundDeviceSink

    sink = SoundDeviceSink(22_050)  # AudioDeviceError(no_speaker_device) when there is none
    speaker = Speaker(router, sink, rate=args.rate, volume=args.volume)
    item = speaker.say(args.text, args.lang)
    item.wait()
    sink.drain()
    speaker.close()
    if item.error is not None:
        raise item.error
    return 0


def _recognisers(args, locator) -> int:
    from speech.recognisers import SPEED_FILE, TEXT, Machine, load_speeds, offers

    machine = Machine.here()
    if args.measure:
        from speech.whisper_build import measure_sizes

        threads = sorted({1, min(machine.cores, 4)})
        report = measure_sizes(["base", *[n for n in args.sizes.split(",") if n and n != "base"]],
                               seconds=(10.0,), computes=("int8",), threads=threads, repeats=1,
                               on_row=lambda name, run: print(f"{name}: {run['by_length']['10.0']['rtf']:.2f} "
                                                              f"({run['threads']} threads)", file=sys.stderr))
        locator.cache_dir.mkdir(parents=True, exist_ok=True)
        (locator.cache_dir / SPEED_FILE).write_text(json.dumps(report, indent=1), encoding="utf-8")
    rows = offers(load_speeds(locator.cache_dir, machine.cores), machine)
    if args.json:
        print(json.dumps([{"name": o.recogniser.name, "librispeech_wer": o.recogniser.librispeech_wer,
                           "source": o.recogniser.source, "rtf": o.speed.rtf if o.speed else None,
                           "recommended": o.recommended, "reason": o.reason.get(args.ui_lang)} for o in rows],
                         ensure_ascii=False))
        return 0
    for offer in rows:
        print(offer.describe(args.ui_lang))
        print("    " + offer.reason.get(args.ui_lang))
    if not any(o.speed for o in rows):
        print(TEXT["why_unmeasured"].get(args.ui_lang, name="small, large-v3-turbo"), file=sys.stderr)
    return 0


def _earcon(args) -> int:
    from speech.audio import write_wav
    from speech.earcons import earcon_audio, play

    if args.out is not None:
        write_wav(args.out, earcon_audio(args.name, 22_050), 22_050)
        print(args.out)
        return 0
    from speech.audio import SoundDeviceSink

    sink = SoundDeviceSink(22_050)
    play(args.name, sink)
    sink.drain()
    return 0
