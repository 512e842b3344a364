"""Bilingual user-facing text.

Every string a user can hear or read exists in English and Chinese. Modules declare their strings in a
`Catalog`; a test walks every catalog and checks that both languages are present and take the same
placeholders, so a missing translation is a test failure, not a surprise for a user.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Literal

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")


def normalize_lang(lang: str | None) -> Lang:
    """Map 'zh', 'zh-CN', 'zh_Hans', 'cmn' to 'zh' and everything else to 'en'."""
    if lang and lang.lower().replace("_", "-").split("-")[0] in ("zh", "cmn", "yue"):
        return "zh"
    return "en"


@dataclass(frozen=True)
class Text:
    """One message in both languages, with `str.format` placeholders."""

    en: str
    zh: str

    def get(self, lang: str | None = "en", /, **kwargs: object) -> str:
        """The message in `lang`; a placeholder given a Text takes that Text in the same language."""
        zh = normalize_lang(lang) == "zh"
        template = self.zh if zh else self.en
        if not kwargs:
            return template
        return template.format(**{k: (v.zh if zh else v.en) if isinstance(v, Text) else v for k, v in kwargs.items()})

    def format(self, **kwargs: object) -> Text:
        """Both languages filled in; a placeholder given a Text takes each language's own wording."""
        return Text(self.get("en", **kwargs), self.get("zh", **kwargs))

    def __str__(self) -> str:
        return self.en


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


_CATALOGS: dict[str, Catalog] = {}


class Catalog:
    """A named set of bilingual messages. `Catalog("safety", {"key": ("English", "中文")})`."""

    def __init__(self, name: str, entries: dict[str, tuple[str, str]], *, register: bool = True):
        self.name = name
        self.entries = {key: Text(en, zh) for key, (en, zh) in entries.items()}
        if register:  # unregistered catalogs are for tests of the checks themselves
            _CATALOGS[name] = self

    def __getitem__(self, key: str) -> Text:
        return self.entries[key]

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def get(self, key: str, lang: str | None = "en", /, **kwargs: object) -> str:
        return self.entries[key].get(lang, **kwargs)

    def problems(self) -> list[str]:
        """Keys whose translations are empty or disagree on placeholders."""
        found = []
        for key, text in self.entries.items():
            if not text.en.strip() or not text.zh.strip():
                found.append(f"{self.name}.{key}: empty translation")
            elif placeholders(text.en) != placeholders(text.zh):
                found.append(f"{self.name}.{key}: placeholders differ ({text.en!r} vs {text.zh!r})")
        return found


def catalogs() -> dict[str, Catalog]:
    """Every catalog declared by a module imported so far."""
    return dict(_CATALOGS)


# How to try again after a failure, by where it was started: the wizard's Download button, the command line,
# or anywhere else. Messages take it as an {again} placeholder (Text.format fills each language's own).
RETRY = Catalog("retry", {
    "button": ("press Download again", "再按一次“下载”"),
    "command": ("run the command again", "再运行一次命令"),
    "again": ("try again", "再试一次"),
})


def retry_hint(where: str) -> Text:
    """RETRY's wording for "button", "command" or anything else ("try again")."""
    return RETRY[where] if where in RETRY else RETRY["again"]
