"""User-facing text: English in the code, every other language in a gettext message catalog.

The English wording is written where it is used and is the message id:

    Text("Turn on Wi-Fi.")                      # looked up in each language's catalog
    Text("Delete", ctx="gallery")               # the same English, a different translation there
    Text("Call {name}.").format(name=contact)   # placeholders; a Text given as a value takes each language's own
    Catalog("app", {"send": "Send"})            # named messages; each entry's context is "app.send"

Each other language has one catalog, `assistant_core/locale/<lang>/LC_MESSAGES/phonebuddy.po` (gettext's
format, read and written with Babel), compiled to a `.mo` beside it that this module reads with the standard
library's `gettext` (no Babel at run time, a few milliseconds per language). A language is known once its
catalog exists: `LANGS` is English plus every folder under `locale/`, plus every language of the registry
(`assistant_core.languages`: a language folder elsewhere, named by `PHONEBUDDY_LANGUAGES`, brings its catalog
from there).

A message missing from a catalog, or one whose translation does not fill the same placeholders, falls back
to English at run time and never raises; `scripts/i18n_check.py` (run by the test suite) fails on it, and on
any English/Chinese pair still written inline. `scripts/i18n_migrate.py` moves such pairs into the catalogs.

`Text(en, zh)` with both strings still builds a text with fixed wordings, for data that is computed per
language at run time (a name in each script, an ordinal word); it is not a message and is not extracted.
"""

from __future__ import annotations

import gettext
import logging
import string
from dataclasses import dataclass
from pathlib import Path

from assistant_core import languages

log = logging.getLogger(__name__)

Lang = str  # "en", or a folder name under locale/ ("zh")
DOMAIN = "phonebuddy"
LOCALE_DIR = Path(__file__).resolve().with_name("locale")


def _discover() -> tuple[Lang, ...]:
    found: set[str] = set()
    try:
        for folder in sorted(LOCALE_DIR.iterdir()):
            messages = folder / "LC_MESSAGES"
            if folder.name != "en" and ((messages / f"{DOMAIN}.po").is_file() or (messages / f"{DOMAIN}.mo").is_file()):
                found.add(folder.name)
    except OSError:  # an installation without catalogs still speaks English
        pass
    found.update(languages.registry())  # a registered language reads English where its catalog is silent
    return ("en", *sorted(found - {"en"}))


LANGS: tuple[Lang, ...] = _discover()


def normalize_lang(lang: str | None) -> Lang:
    """Map 'zh', 'zh-CN', 'zh_Hans', 'cmn' to 'zh' (any language with a catalog likewise); else 'en'."""
    if not lang:
        return "en"
    primary = lang.lower().replace("_", "-").split("-")[0]
    primary = languages.aliases().get(primary, primary)
    return primary if primary in LANGS else "en"


# ---- catalogs on disk --------------------------------------------------------------------------------

_TABLES: dict[str, dict[tuple[str | None, str], str]] = {}


def catalog_paths(lang: str, root: Path | None = None) -> tuple[Path, Path]:
    """The `.po` and `.mo` of one language (under `root`, a copy of the locale folder, when given; else
    where its language folder is, `assistant_core/locale/` for the built-in ones)."""
    if root is None:
        own = languages.registry().get(lang)
        root = own.catalog_root if own is not None and own.catalog_root is not None else LOCALE_DIR
    base = root / lang / "LC_MESSAGES"
    return base / f"{DOMAIN}.po", base / f"{DOMAIN}.mo"


def _read_mo(path: Path) -> dict[tuple[str | None, str], str]:
    with path.open("rb") as fh:
        translations = gettext.GNUTranslations(fh)
    table: dict[tuple[str | None, str], str] = {}
    for key, value in translations._catalog.items():  # type: ignore[attr-defined]  # the parsed .mo
        if not isinstance(key, str) or not key or not value:
            continue
        ctx, sep, msgid = key.partition("\x04")
        table[(ctx, msgid) if sep else (None, key)] = value
    return table


def _read_po(path: Path) -> dict[tuple[str | None, str], str]:
    # Only when no .mo is there (a checkout before `scripts/i18n_compile.py`): Babel parses the text form.
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        catalog = read_po(fh)
    return {(m.context, m.id): m.string for m in catalog if m.id and isinstance(m.id, str) and m.string
            and not m.fuzzy}


def table(lang: str) -> dict[tuple[str | None, str], str]:
    """(context, English) → translation for `lang`, loaded once; empty (English) if it cannot be read."""
    if lang not in _TABLES:
        po, mo = catalog_paths(lang)
        loaded: dict[tuple[str | None, str], str] = {}
        try:
            loaded = _read_mo(mo) if mo.is_file() else _read_po(po) if po.is_file() else {}
        except Exception:  # a damaged catalog: English, never a crash (the catalog check names it)
            log.warning("the %s message catalog could not be read; using English", lang, exc_info=True)
        _TABLES[lang] = loaded
    return _TABLES[lang]


def reload() -> None:
    """Forget the loaded catalogs and read the language folders again (after the files changed)."""
    global LANGS
    _TABLES.clear()
    languages.reload()
    LANGS = _discover()


def translate(lang: str, msgid: str, ctx: str | None = None) -> str | None:
    """The translation of one message, or None when the catalog lacks it."""
    return table(lang).get((ctx, msgid))


# ---- texts -------------------------------------------------------------------------------------------


def placeholders(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    except ValueError:  # an unbalanced brace: not a template
        return set()


def _fill(template: str, lang: str, values: dict[str, object]) -> str:
    return template.format(**{k: v.get(lang) if isinstance(v, Text) else v for k, v in values.items()})


@dataclass(frozen=True, init=False)
class Text:
    """One message in every language, with `str.format` placeholders.

    `en` and `zh` are filled in when the text is made (so equality, hashing, `repr` and `asdict` behave as
    plain fields); any other language is looked up when asked for.
    """

    en: str
    zh: str
    # Not dataclass fields (so `asdict` and equality see only the wordings): the catalog's key, when the text
    # has one, and the values given to `.format()`.
    msgid = None
    ctx = None
    values = ()

    def __init__(self, en: str, zh: str | None = None, *, ctx: str | None = None,
                 _values: tuple[tuple[str, object], ...] = ()):
        set_ = object.__setattr__
        if zh is None:  # a catalog message: English here, the rest from the catalogs
            set_(self, "msgid", en)
            set_(self, "ctx", ctx)
            set_(self, "values", _values)
            set_(self, "en", self._in("en"))
            set_(self, "zh", self._in("zh"))
        else:  # fixed wordings (per-language data computed at run time)
            set_(self, "msgid", None)
            set_(self, "ctx", None)
            set_(self, "values", ())
            set_(self, "en", en)
            set_(self, "zh", zh)

    def template(self, lang: str) -> str | None:
        """This message's own template in `lang` (None when the catalog lacks it or it has no msgid)."""
        if self.msgid is None:
            return None
        if lang == "en":
            return self.msgid
        return translate(lang, self.msgid, self.ctx)

    def _in(self, lang: str) -> str:
        assert self.msgid is not None
        values = dict(self.values)
        own = self.template(lang) if lang != "en" else self.msgid
        for template in (own, self.msgid):
            if template is None:
                continue
            if not values:
                return template
            try:
                return _fill(template, lang, values)
            except (KeyError, IndexError, ValueError, AttributeError):  # a translation with a wrong placeholder
                if template == self.msgid:
                    raise
                log.warning("the %s translation of %r has other placeholders; using English", lang, self.msgid)
        return self.msgid

    def get(self, lang: str | None = "en", /, **kwargs: object) -> str:
        """The message in `lang`; a placeholder given a Text takes that Text in the same language."""
        lang = normalize_lang(lang)
        if lang == "en":
            template = self.en
        elif lang == "zh":
            template = self.zh
        elif self.msgid is not None:
            template = self._in(lang)
        else:
            template = self.en  # fixed wordings exist in English and Chinese only
        if not kwargs:
            return template
        try:
            return _fill(template, lang, kwargs)
        except (KeyError, IndexError, ValueError, AttributeError):
            if lang == "en":
                raise
            log.warning("the %s text %r has other placeholders; using English", lang, template)
            return _fill(self.en, "en", kwargs)

    def format(self, /, **kwargs: object) -> Text:
        """Placeholders filled in every language; a placeholder given a Text takes each language's wording."""
        if self.msgid is not None and not self.values:
            return Text(self.msgid, ctx=self.ctx, _values=tuple(kwargs.items()))
        return Text(self.get("en", **kwargs), self.get("zh", **kwargs))

    def __str__(self) -> str:
        return self.en


_CATALOGS: dict[str, Catalog] = {}


class Catalog:
    """A named set of messages: `Catalog("safety", {"key": "English"})`, each entry's context "safety.key".

    An entry given as an (English, Chinese) pair keeps both wordings fixed (tests of the checks use that).
    """

    def __init__(self, name: str, entries: dict[str, str | tuple[str, str]], *, register: bool = True):
        self.name = name
        self.entries = {key: Text(*value) if isinstance(value, tuple) else Text(value, ctx=f"{name}.{key}")
                        for key, value in entries.items()}
        if register:  # unregistered catalogs are for tests of the checks themselves
            _CATALOGS[name] = self

    def __getitem__(self, key: str) -> Text:
        return self.entries[key]

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def get(self, key: str, lang: str | None = "en", /, **kwargs: object) -> str:
        return self.entries[key].get(lang, **kwargs)

    def problems(self) -> list[str]:
        """Keys whose translations are missing or empty, or disagree with English on placeholders."""
        found = []
        for key, text in self.entries.items():
            wordings = {"en": text.en, "zh": text.zh} if text.msgid is None else \
                {lang: text.template(lang) for lang in LANGS}
            missing = [lang for lang, wording in wordings.items() if not (wording or "").strip()]
            if missing:
                found.append(f"{self.name}.{key}: empty or missing translation ({', '.join(missing)})")
                continue
            for lang, wording in wordings.items():
                if placeholders(wording or "") != placeholders(wordings["en"] or ""):
                    found.append(f"{self.name}.{key}: placeholders differ ({wordings['en']!r} vs {lang} {wording!r})")
        return found


def catalogs() -> dict[str, Catalog]:
    """Every catalog declared by a module imported so far."""
    return dict(_CATALOGS)


# How to try again after a failure, by where it was started: the wizard's Download button, the command line,
# or anywhere else. Messages take it as an {again} placeholder (Text.format fills each language's own).
RETRY = Catalog("retry", {
    "button": "press Download again",
    "command": "run the command again",
    "again": "try again",
})


def retry_hint(where: str) -> Text:
    """RETRY's wording for "button", "command" or anything else ("try again")."""
    return RETRY[where] if where in RETRY else RETRY["again"]
