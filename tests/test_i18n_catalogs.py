"""The message catalogs (issue 26, item 5): the CI check, its failures, the English fallback, the codemod."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from assistant_core import i18n
from assistant_core.i18n import Text

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(ROOT / "scripts"))
check = _script("i18n_check")
migrate = _script("i18n_migrate")


@pytest.fixture(scope="module")
def found():
    return check.extract(ROOT)


def test_every_message_exists_in_every_language():
    """The CI check: no inline pair left, the template current, every message translated with the same
    placeholders, nothing stale, the .mo files compiled from the .po files."""
    assert check.check(ROOT) == []


def test_the_catalogs_hold_the_tree(found):
    assert len(found.messages) > 1000 and found.pairs == []
    assert "zh" in i18n.LANGS and i18n.normalize_lang("zh-Hans") == "zh" and i18n.normalize_lang("xx") == "en"


def _rewrite_po(path: Path, change) -> None:
    from babel.messages.pofile import read_po, write_po

    with path.open("rb") as fh:
        catalog = read_po(fh)
    change(catalog)
    with path.open("wb") as fh:
        write_po(fh, catalog, width=110, include_lineno=False)


def _copy_locale(tmp_path: Path) -> Path:
    locale = tmp_path / "locale"
    shutil.copytree(check.locale_dir(ROOT), locale)
    return locale


def test_the_check_fails_when_a_message_is_missing_in_one_language(tmp_path, found):
    locale = _copy_locale(tmp_path)
    assert check.check(ROOT, locale) == []  # the copy is whole
    (ctx, msgid), _ = next(iter(found.messages.items()))
    _rewrite_po(check.po_path(locale, "zh"), lambda c: c.delete(msgid, context=ctx))
    check.compile_all(locale)
    problems = check.check(ROOT, locale)
    assert problems == [f"zh: no translation of {msgid!r}" + (f" (context {ctx})" if ctx else "")]


def test_the_check_fails_on_a_wrong_placeholder_a_stale_entry_and_an_old_mo(tmp_path, found):
    locale = _copy_locale(tmp_path)
    ctx, msgid = next(k for k in found.messages if i18n.placeholders(k[1]))

    def change(catalog):
        catalog.get(msgid, context=ctx).string = "没有占位符"
        catalog.add("Nobody says this any more", "没人再说这句", context="gone.key")

    _rewrite_po(check.po_path(locale, "zh"), change)
    problems = check.check(ROOT, locale)
    assert any(p.startswith(f"zh: the translation of {msgid!r}") and "placeholders" in p for p in problems)
    assert any("'Nobody says this any more'" in p and "no code uses it" in p for p in problems)
    assert any("phonebuddy.mo is older than phonebuddy.po" in p for p in problems)


@pytest.fixture
def tmp_locale(tmp_path, monkeypatch):
    """assistant_core.i18n reading a catalog written here; the real one again afterwards."""
    locale = tmp_path / "locale"
    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    i18n.reload()
    yield locale
    i18n.reload()


def _write_po(locale: Path, entries: dict[tuple[str | None, str], str]) -> None:
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale="zh")
    for (ctx, msgid), string in entries.items():
        catalog.add(msgid, string, context=ctx)
    path = check.po_path(locale, "zh")
    path.parent.mkdir(parents=True)
    path.write_bytes(check.render_po(catalog))
    check.compile_all(locale)


def test_a_missing_or_broken_translation_falls_back_to_english(tmp_locale):
    _write_po(tmp_locale, {(None, "Hello {name}"): "你好{nom}", (None, "Good morning"): "早上好",
                           ("app.bye", "Bye"): "再见", ("t.greet", "Good morning"): "早上好"})
    assert Text("Good morning").zh == "早上好"
    assert Text("Not translated yet").zh == "Not translated yet"  # English, no crash
    assert Text("Hello {name}").format(name="Ann").zh == "Hello Ann"  # the translation names another field
    assert Text("Hello {name}").get("zh", name="Ann") == "Hello Ann"
    assert Text("Bye", ctx="app.bye").zh == "再见" and Text("Bye").zh == "Bye"
    catalog = i18n.Catalog("t", {"greet": "Good morning", "new": "Not translated yet"}, register=False)
    assert catalog.problems() == ["t.new: empty or missing translation (zh)"]


def test_a_damaged_catalog_speaks_english(tmp_locale):
    mo = check.po_path(tmp_locale, "zh").with_suffix(".mo")
    mo.parent.mkdir(parents=True)
    mo.write_bytes(b"\x00not a catalog")
    assert Text("Good morning").get("zh") == "Good morning"


def test_format_keeps_each_language_and_nests_texts():
    name = Text("Ann", "安")
    text = Text("Hi {who}, {n} new", "{who}你好，{n} 条新消息").format(who=name, n=3)
    assert (text.en, text.zh) == ("Hi Ann, 3 new", "安你好，3 条新消息")
    assert text == Text("Hi Ann, 3 new", "安你好，3 条新消息") and hash(text) == hash(Text(text.en, text.zh))


SAMPLE = '''\
from assistant_core.i18n import Catalog, Text

MSG = Catalog("sample", {
    "hello": ("Hello {name}", "你好{name}"),
    "long": (
        "A long message "
        "on two lines",
        "很长的消息",
    ),
}, register=False)
DELETE = Text("Delete", "删除")
CLEAR = Text("Delete", "清除")
EMPTY = Text("", "")
NAMED = Text(en="Named", zh="具名")


class Person:
    def __init__(self, en, zh):
        self.name = Text(en, zh)


def call(p, number):
    return Text(f"Call {p.name.en} on {number}.", f"给{p.name.zh}打{number}。")


def nth(i):
    en, zh = ("first", "second")[i], "一二"[i]
    return Text(f"Open the {en} one {{now}}.", f"打开第{zh}个{{now}}。")


def timer(n):
    article = "an" if n == 8 else "a"
    return Text(f"Start {article} {n}-minute timer.", f"开一个 {n} 分钟的计时器。")


VALUES = {
    "hello": MSG["hello"].format(name="Ann"), "long": MSG["long"], "delete": DELETE, "clear": CLEAR,
    "empty": EMPTY, "named": NAMED, "call": call(Person("Ann", "安"), 110), "nth": nth(1), "timer8": timer(8), "timer5": timer(5),
}
'''

WRAPPED = '''\
from assistant_core.i18n import Text


def T(en: str, zh: str) -> Text:  # short
    return Text(en, zh)


STEP = T("Tap it.", "点一下。")
'''


def _run_module(path: Path) -> dict:
    scope: dict = {"__name__": "sample"}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), scope)
    return {k: (v.en, v.zh) for k, v in scope["VALUES"].items()}


def test_the_codemod_moves_pairs_into_the_catalog_and_keeps_every_wording(tmp_path, monkeypatch):
    root = tmp_path / "tree"
    sample = root / "app" / "sample.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(SAMPLE, encoding="utf-8")
    wrapper = root / "harness" / "phoneworld" / "tasks" / "driver.py"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(WRAPPED, encoding="utf-8")
    before = _run_module(sample)

    state = migrate.run(root)
    assert state.skipped == [] and state.catalog_entries == 2 and state.wrappers == 1
    migrated = sample.read_text(encoding="utf-8")
    assert '"hello": "Hello {name}",' in migrated and "很长" not in migrated and "删除" not in migrated
    assert 'DELETE = Text("Delete")' in migrated and 'NAMED = Text("Named")' in migrated and 'CLEAR = Text("Delete", ctx="app.sample")' in migrated
    assert 'Text("Call {name} on {number}.").format(name=p.name, number=number)' in migrated
    assert 'Text("Open the {en} one {{now}}.").format(en=Text(str(en), str(zh)))' in migrated
    assert "def T(en: str, *, ctx: str | None = None) -> Text:  # short" in wrapper.read_text(encoding="utf-8")
    assert 'STEP = T("Tap it.")' in wrapper.read_text(encoding="utf-8")
    assert check.check(root) == []

    monkeypatch.setattr(i18n, "LOCALE_DIR", check.locale_dir(root))
    i18n.reload()
    try:
        assert _run_module(sample) == before  # the same wordings in both languages, now from the catalog
    finally:
        monkeypatch.undo()
        i18n.reload()

    # Idempotent: a second run changes nothing; a pair added since is migrated alone.
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert migrate.run(root).files == []
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == files
    (root / "app" / "later.py").write_text('from assistant_core.i18n import Text\n\nLATER = Text("Later", "稍后")\n',
                                           encoding="utf-8")
    assert migrate.run(root).files == ["app/later.py"]
    assert sample.read_text(encoding="utf-8") == migrated
    assert check.translations(check.po_path(check.locale_dir(root), "zh"))[(None, "Later")] == "稍后"
    assert check.check(root) == []


def test_a_third_language_is_its_catalog(tmp_path, monkeypatch):
    """Adding a language: its catalog folder makes it known, and every message (nested ones too) reads from it."""
    from babel.messages.catalog import Catalog

    from app.strings import APP

    locale = _copy_locale(tmp_path)
    catalog = Catalog(locale="fr")
    catalog.add("Send", "Envoyer", context="app.send")
    catalog.add("Ready", "Prêt", context="app.state_idle")
    catalog.add("Phone: {phone} · Agent: {agent} · {state}", "Téléphone : {phone} · Agent : {agent} · {state}",
                context="app.status_line")
    path = check.po_path(locale, "fr")
    path.parent.mkdir(parents=True)
    path.write_bytes(check.render_po(catalog))
    check.compile_all(locale)
    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    monkeypatch.setattr(i18n, "LANGS", i18n._discover())
    i18n.reload()
    try:
        assert i18n.LANGS == ("en", "fr", "zh") and i18n.normalize_lang("fr-CA") == "fr"
        assert APP["send"].get("fr") == "Envoyer" and APP["send"].get("zh") == "发送"
        line = APP["status_line"].format(phone="Pixel", agent="demo", state=APP["state_idle"])
        assert line.get("fr") == "Téléphone : Pixel · Agent : demo · Prêt"
        assert APP["stop"].get("fr") == APP["stop"].en  # not translated yet: English, and the check says so
        assert any(p.startswith("fr: no translation of ") for p in check.check(ROOT, locale))
    finally:
        monkeypatch.undo()
        i18n.reload()
