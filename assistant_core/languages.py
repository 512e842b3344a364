"""The spoken languages: one `Language` record each, and the one place a new language is added.

Everything that offers or configures a language reads this registry: the `--lang` choices of the command
lines (`choices()`), the window's language list, the setup wizard's buttons, keys and spoken names and F8's
switch (`codes()`, `next_code()`), the recogniser's language and initial prompt (`speech.asr`), the voice
(`speech.tts`: the engine tried first and its voice, the piper voice, espeak-ng's voice) and the command words
hinted to the recogniser. What a language *does* differently (Chinese numbers said aloud in
`speech.textnorm`, Kokoro's Mandarin front end in `speech.kokoro`, the answer tables in
`assistant_core.answers`) stays code of its own, reached through the language's code.

English and Chinese are built in (`BUILTIN`). Any other language is a folder:

    <root>/<code>/language.toml                 # this record's fields (code = the folder's name)
    <root>/<code>/LC_MESSAGES/phonebuddy.mo     # its message catalog (from phonebuddy.po, see i18n)
    # and its voice data, fetched like the others (a piper voice named by `voice`)

where `<root>` is `assistant_core/locale/` (a language shipped with the app) or any folder named in the
`PHONEBUDDY_LANGUAGES` environment variable (several joined by the path separator), read at start and again
by `reload()`. A language file that cannot be read is logged and skipped; English always remains.

    name = "Français"            # its name in itself
    english_name = "French"
    whisper = "fr"               # the recogniser's language (default: the code)
    asr_prompt = ""              # the recogniser's initial prompt
    hotwords = ["Wi-Fi", "Paramètres"]
    tts_engine = "piper"         # the engine tried first: "piper" or "kokoro"
    voice = "fr_FR-siwis-medium" # that engine's voice
    espeak_voice = "fr"          # the last fallback
    keys = ["F"]                 # the setup wizard's letter for it
    spoken_names = ["french", "français"]
    sentence_stop = ". "
    yes_words = ["oui"]          # answers to a confirmation, beside assistant_core.answers' tables
    no_words = ["non"]
    repeat_words = ["répétez"]
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

log = logging.getLogger(__name__)

ENV_VAR = "PHONEBUDDY_LANGUAGES"
LANGUAGE_FILE = "language.toml"
BUILTIN_ROOT = Path(__file__).resolve().with_name("locale")


@dataclass(frozen=True)
class Language:
    """One spoken language's settings (see the module docstring for the file that declares one)."""

    code: str  # the catalog folder's name and the `--lang` value
    name: str  # its name in itself ("中文")
    english_name: str  # "Chinese"
    whisper: str = ""  # the recogniser's language code (default: `code`)
    asr_prompt: str = ""  # the recogniser's initial prompt (steers Mandarin to simplified script and punctuation)
    hotwords: tuple[str, ...] = ()  # command words hinted to the recogniser
    tts_engine: str = "piper"  # the engine tried first: "piper" or "kokoro"
    voice: str = ""  # that engine's voice: a piper voice id, or a Kokoro voice ("female", "male", "zf_xiaobei")
    piper_fallback: str = ""  # a piper voice for a language whose first engine is not piper
    espeak_voice: str = ""  # espeak-ng's voice, the last fallback ("" none)
    keys: tuple[str, ...] = ()  # the setup wizard's letters for it
    spoken_names: tuple[str, ...] = ()  # words that choose it in the setup wizard, in any language
    sentence_stop: str = ". "  # between two sentences said one after the other
    yes_words: tuple[str, ...] = ()  # whole answers beside assistant_core.answers' own tables
    no_words: tuple[str, ...] = ()
    repeat_words: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # other codes that mean it ("cmn" for "zh")
    catalog_root: Path | None = None  # the folder holding <code>/LC_MESSAGES (None: assistant_core/locale)

    def __post_init__(self) -> None:
        if not self.whisper:
            object.__setattr__(self, "whisper", self.code)

    @property
    def piper_voice(self) -> str:
        """The piper voice that speaks it ("" none)."""
        return self.voice if self.tts_engine == "piper" else self.piper_fallback

    def label(self, ui_lang: str) -> str:
        """Its name for a list shown in `ui_lang`: in itself, with the English name beside it elsewhere."""
        if ui_lang == self.code or self.name == self.english_name:
            return self.name
        return f"{self.name} ({self.english_name})"


BUILTIN: tuple[Language, ...] = (
    Language("en", "English", "English", tts_engine="piper", voice="en_US-joe-medium", espeak_voice="en-us",
             hotwords=("Wi-Fi", "Bluetooth", "Settings", "airplane mode", "PhoneBuddy"), keys=("E",),
             spoken_names=("english", "英文", "英语", "英語")),
    Language("zh", "中文", "Chinese", asr_prompt="以下是普通话的句子。", tts_engine="kokoro", voice="female",
             piper_fallback="zh_CN-huayan-medium", espeak_voice="cmn-latn-pinyin",
             hotwords=("设置", "蓝牙", "飞行模式", "微信", "打开", "闹钟"), keys=("C", "Z"), sentence_stop="。",
             spoken_names=("chinese", "mandarin", "zhongwen", "中文", "汉语", "漢語", "普通话", "国语", "華語", "华语"),
             aliases=("cmn", "yue")),
)

_TUPLES = {f.name for f in fields(Language) if f.type == "tuple[str, ...]"}
_STRINGS = {f.name for f in fields(Language) if f.type == "str"} - {"code"}


def read_language_file(path: Path) -> Language:
    """One `<code>/language.toml` (its folder's name is the code). Raises ValueError on a bad file."""
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    code = path.parent.name
    unknown = set(data) - _TUPLES - _STRINGS
    if unknown:
        raise ValueError(f"{path}: unknown fields {sorted(unknown)}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("english_name"), str):
        raise ValueError(f"{path}: 'name' and 'english_name' are required")
    values: dict[str, object] = {}
    for key, value in data.items():
        if key in _TUPLES:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{path}: {key} must be a list of strings")
            values[key] = tuple(value)
        elif not isinstance(value, str):
            raise ValueError(f"{path}: {key} must be a string")
        else:
            values[key] = value
    if values.get("tts_engine", "piper") not in ("piper", "kokoro"):
        raise ValueError(f"{path}: tts_engine must be 'piper' or 'kokoro'")
    return Language(code=code, catalog_root=path.parent.parent, **values)  # type: ignore[arg-type]


def roots() -> list[Path]:
    """Where language folders are looked for: the app's own locale folder, then `PHONEBUDDY_LANGUAGES`."""
    extra = [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    return [BUILTIN_ROOT, *extra]


def _load() -> dict[str, Language]:
    found = {lang.code: lang for lang in BUILTIN}
    for root in roots():
        try:
            files = sorted(root.glob(f"*/{LANGUAGE_FILE}"))
        except OSError:
            continue
        for path in files:
            if path.parent.name in found:
                log.warning("language %s is already known; %s is ignored", path.parent.name, path)
                continue
            try:
                found[path.parent.name] = read_language_file(path)
            except (OSError, ValueError, tomllib.TOMLDecodeError):
                log.warning("the language file %s could not be read; skipped", path, exc_info=True)
    return found


_REGISTRY: dict[str, Language] | None = None


def registry() -> dict[str, Language]:
    """code -> Language: English and Chinese, then the language folders in the order found."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _load()
    return _REGISTRY


def reload() -> None:
    """Read the language folders again (after `PHONEBUDDY_LANGUAGES` or a language file changed)."""
    global _REGISTRY
    _REGISTRY = None


def codes() -> tuple[str, ...]:
    return tuple(registry())


def choices() -> tuple[str, ...]:
    """The `--lang` choices of every command line."""
    return codes()


def whisper_codes() -> tuple[str, ...]:
    """The recogniser's languages (the `--language` choices of `phonebuddy speech transcribe`)."""
    return tuple(dict.fromkeys(lang.whisper for lang in registry().values()))


def get(code: str | None) -> Language:
    """The language for `code` (an alias or a region, "zh-CN", reaches it); English when unknown."""
    known = registry()
    primary = (code or "en").lower().replace("_", "-").split("-")[0]
    if primary in known:
        return known[primary]
    for lang in known.values():
        if primary in lang.aliases:
            return lang
    return known["en"]


def by_whisper(code: str | None) -> Language | None:
    """The language the recogniser names `code`, or None."""
    return next((lang for lang in registry().values() if lang.whisper == code), None)


def next_code(current: str) -> str:
    """F8's switch: the next language in the registry's order, back to the first after the last."""
    order = codes()
    here = get(current).code
    return order[(order.index(here) + 1) % len(order)]


def aliases() -> dict[str, str]:
    """alias -> code, for every registered language."""
    return {alias: lang.code for lang in registry().values() for alias in lang.aliases}
