"""Extract the user-facing messages from the source, write the template and catalogs, and check them.

    python scripts/i18n_check.py            # list every problem; exit status 1 if there is any
    python scripts/i18n_check.py --compile  # rebuild the .mo files from the .po files first

The messages are what `assistant_core.i18n` looks up (see its docstring): `Text("English")` and
`Text("English", ctx="…")` calls (and the oracle scripts' `T(...)`, which wraps it), and the string entries
of every `Catalog("name", {"key": "English"})` (context "name.key"). The extractor is our own (Python's
`ast`), because catalog entries are dictionary values that Babel's keyword extractor cannot see; Babel reads
and writes the gettext files (`.pot`, `.po`, `.mo`).

The check fails on: an English/Chinese pair still written inline (run `scripts/i18n_migrate.py`), a
template that is not what the source says, a message missing, empty or fuzzy in a language, a translation
whose placeholders differ from the English, an entry no code uses any more, and a `.mo` older than its `.po`.
"""

from __future__ import annotations

import argparse
import ast
import io
import string
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "assistant_core", "harness", "speech", "training", "phonebuddy")  # what is installed
LOCALE = Path("assistant_core") / "locale"
DOMAIN = "phonebuddy"
TEXT_NAMES = frozenset({"Text"})
# Functions that wrap `Text(en, zh)` for brevity: module → name. Their calls are messages too.
WRAPPERS = {"harness.phoneworld.tasks.driver": "T"}
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)  # the catalogs' header date (so writing is idempotent)


@dataclass
class Message:
    msgid: str
    ctx: str | None
    paths: list[str] = field(default_factory=list)


@dataclass
class Extracted:
    messages: dict[tuple[str | None, str], Message] = field(default_factory=dict)
    pairs: list[str] = field(default_factory=list)  # "path:line" of inline pairs still to migrate
    dynamic: list[str] = field(default_factory=list)  # "path:line" of a context that is not a literal

    def add(self, msgid: str, ctx: str | None, path: str) -> None:
        if not msgid.strip():  # an empty text is no message (and "" is the catalog's header in gettext)
            return
        message = self.messages.setdefault((ctx, msgid), Message(msgid, ctx))
        if path not in message.paths:
            message.paths.append(path)


def placeholders(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}
    except ValueError:
        return set()


def source_files(root: Path) -> list[Path]:
    files = [p for package in PACKAGES for p in (root / package).rglob("*.py")]
    return sorted(p for p in files if "__pycache__" not in p.parts)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def text_callees(tree: ast.Module, module: str) -> set[str]:
    """The names whose calls build a Text in this module: Text, and any wrapper it defines or imports."""
    names = set(TEXT_NAMES)
    if module in WRAPPERS:
        names.add(WRAPPERS[module])
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in WRAPPERS:
            wanted = WRAPPERS[node.module]
            names.update(alias.asname or alias.name for alias in node.names if alias.name == wanted)
    return names


def is_wording(node: ast.expr) -> bool:
    """A string literal, or an f-string with some literal words: a message, not a value computed in code."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and str(v.value).strip() for v in node.values)
    return False


def callee(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else None


def pair_args(node: ast.Call) -> tuple[ast.expr, ast.expr] | None:
    """The (English, Chinese) wordings of `Text("…", "…")` or `Text(en="…", zh="…")`, else None."""
    named = {k.arg: k.value for k in node.keywords}
    args = list(node.args)
    for name in ("en", "zh")[len(args):]:
        if name in named:
            args.append(named.pop(name))
    if len(args) == 2 and not named and all(is_wording(a) for a in args):
        return args[0], args[1]
    return None


def extract_file(path: Path, rel: str, module: str, found: Extracted) -> None:
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        found.pairs.append(f"{rel}: does not parse")
        return
    texts = text_callees(tree, module)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = callee(node)
        if name in texts:
            ctx_kw = [k for k in node.keywords if k.arg == "ctx"]
            if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                ctx: str | None = None
                if ctx_kw:
                    value = ctx_kw[0].value
                    if not (isinstance(value, ast.Constant) and isinstance(value.value, (str, type(None)))):
                        found.dynamic.append(f"{rel}:{node.lineno}")
                        continue
                    ctx = value.value
                found.add(node.args[0].value, ctx, rel)
            elif pair_args(node):
                found.pairs.append(f"{rel}:{node.lineno}")
        elif name == "Catalog" and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[1], ast.Dict):
            catalog = node.args[0].value
            for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.add(value.value, f"{catalog}.{key.value}", rel)
                elif isinstance(value, ast.Tuple) and len(value.elts) == 2 and all(is_wording(e) for e in value.elts):
                    found.pairs.append(f"{rel}:{value.lineno}")


def extract(root: Path = ROOT) -> Extracted:
    found = Extracted()
    for path in source_files(root):
        extract_file(path, path.relative_to(root).as_posix(), module_name(root, path), found)
    return found


# ---- gettext files through Babel ---------------------------------------------------------------------


def locale_dir(root: Path = ROOT) -> Path:
    return root / LOCALE


def languages(locale: Path) -> list[str]:
    if not locale.is_dir():
        return []
    return sorted(d.name for d in locale.iterdir() if d.name != "en" and (d / "LC_MESSAGES" / f"{DOMAIN}.po").is_file())


def po_path(locale: Path, lang: str) -> Path:
    return locale / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(path: Path):
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        return read_po(fh)


def build_catalog(found: Extracted, lang: str | None, strings: dict[tuple[str | None, str], str]):
    """A Babel catalog of every extracted message, in source order, with `strings` as translations."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale=lang, domain=DOMAIN, project="PhoneBuddy", version="0.1", fuzzy=False,
                      creation_date=FIXED_DATE, revision_date=FIXED_DATE,
                      copyright_holder="PhoneBuddy contributors", language_team=f"PhoneBuddy {lang or 'template'}",
                      last_translator="PhoneBuddy contributors")
    for (ctx, msgid), message in found.messages.items():
        flags = ("python-brace-format",) if placeholders(msgid) else ()
        catalog.add(msgid, strings.get((ctx, msgid), ""), locations=[(p, None) for p in message.paths],
                    context=ctx, flags=flags)
    return catalog


def render_po(catalog) -> bytes:
    from babel.messages.pofile import write_po

    out = io.BytesIO()
    write_po(out, catalog, width=110, include_lineno=False, ignore_obsolete=True)
    return out.getvalue()


def render_mo(po_file: Path) -> bytes:
    from babel.messages.mofile import write_mo

    out = io.BytesIO()
    write_mo(out, read_catalog(po_file))
    return out.getvalue()


def translations(path: Path) -> dict[tuple[str | None, str], str]:
    """(context, English) → translation (empty, fuzzy and header entries left out)."""
    if not path.is_file():
        return {}
    return {(m.context, m.id): m.string for m in read_catalog(path)
            if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string and not m.fuzzy}


def write_if_changed(path: Path, data: bytes) -> bool:
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def compile_all(locale: Path) -> list[Path]:
    """Rebuild every language's .mo from its .po; the files that changed."""
    changed = []
    for lang in languages(locale):
        po = po_path(locale, lang)
        if write_if_changed(po.with_suffix(".mo"), render_mo(po)):
            changed.append(po.with_suffix(".mo"))
    return changed


def sync(root: Path, found: Extracted, extra: dict[tuple[str | None, str], str] | None = None,
         new_lang: str = "zh") -> list[Path]:
    """Write the template and every language's catalog for `found` (keeping their translations; `extra` adds
    Chinese ones), then compile. Returns the files that changed."""
    locale = locale_dir(root)
    changed = []
    template = locale / f"{DOMAIN}.pot"
    if write_if_changed(template, render_po(build_catalog(found, None, {}))):
        changed.append(template)
    langs = sorted(set(languages(locale)) | {new_lang})
    for lang in langs:
        path = po_path(locale, lang)
        strings = translations(path)
        if lang == new_lang and extra:
            strings = {**strings, **extra}
        if write_if_changed(path, render_po(build_catalog(found, lang, strings))):
            changed.append(path)
    return changed + compile_all(locale)


# ---- the check ---------------------------------------------------------------------------------------


def check(root: Path = ROOT, locale: Path | None = None) -> list[str]:
    """Every problem with the catalogs of the tree at `root` (its own locale folder unless `locale`)."""
    locale = locale or locale_dir(root)
    found = extract(root)
    problems = [f"{where}: an English/Chinese pair written inline; run python scripts/i18n_migrate.py"
                for where in found.pairs]
    problems += [f"{where}: a message context must be a string literal" for where in found.dynamic]
    template = locale / f"{DOMAIN}.pot"
    if not template.is_file() or template.read_bytes() != render_po(build_catalog(found, None, {})):
        problems.append(f"{template.name} is not what the source says; run python scripts/i18n_migrate.py")
    langs = languages(locale)
    if not langs:
        problems.append(f"no language catalog under {locale}")
    for lang in langs:
        po = po_path(locale, lang)
        try:
            catalog = read_catalog(po)
        except Exception as exc:
            problems.append(f"{lang}: {po.name} cannot be read ({exc})")
            continue
        entries = {(m.context, m.id): m for m in catalog if m.id}
        for key, message in found.messages.items():
            where = f"{message.msgid!r}" + (f" (context {message.ctx})" if message.ctx else "")
            entry = entries.get(key)
            if entry is None or not isinstance(entry.string, str) or not entry.string.strip():
                problems.append(f"{lang}: no translation of {where}")
            elif entry.fuzzy:
                problems.append(f"{lang}: the translation of {where} is marked fuzzy")
            elif placeholders(entry.string) != placeholders(message.msgid):
                problems.append(f"{lang}: the translation of {where} has placeholders "
                                f"{sorted(placeholders(entry.string))}, English has {sorted(placeholders(message.msgid))}")
        for key in entries.keys() - found.messages.keys():
            problems.append(f"{lang}: {key[1]!r} (context {key[0]}) is in the catalog but no code uses it; "
                            "run python scripts/i18n_migrate.py")
        mo = po.with_suffix(".mo")
        if not mo.is_file() or mo.read_bytes() != render_mo(po):
            problems.append(f"{lang}: {mo.name} is older than {po.name}; run python scripts/i18n_check.py --compile")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compile", action="store_true", help="rebuild the .mo files from the .po files first")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    if args.compile:
        for path in compile_all(locale_dir(args.root)):
            print(f"compiled {path.relative_to(args.root)}")
    problems = check(args.root)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "the message catalogs are complete")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
