"""Move the English/Chinese pairs written inline in the code into the message catalogs (a codemod).

    python scripts/i18n_migrate.py          # rewrite the tree, write the catalogs; prints what it did
    python scripts/i18n_migrate.py --check  # change nothing; exit status 1 if anything is left to migrate

What it rewrites, in the installed packages (`app`, `assistant_core`, `harness`, `speech`, `training`,
`phonebuddy`; never `tests/`):

- `Text("English", "中文")` → `Text("English")`, the Chinese into `locale/zh/LC_MESSAGES/phonebuddy.po`;
- `Text(f"Call {n.en}.", f"给{n.zh}打电话。")` → `Text("Call {n}.").format(n=n)`: a field `X.en` paired
  with `X.zh` takes the Text `X`, a field written the same in both takes that value, and the fields left
  over are paired in order as a per-language value (`Text(str(a), str(b))`);
- the same for the oracle scripts' `T(en, zh)`, whose definition becomes `T(en, *, ctx=None)`;
- `Catalog("name", {"key": ("English", "中文")})` → `Catalog("name", {"key": "English"})` (context
  "name.key").

When the same English already has another Chinese, the new message gets the module's name as its context
(`Text("Delete", ctx="harness.phoneworld.apps.gallery")`). Files are walked in sorted order, so a run on
the same tree always writes the same result; a migrated call is never touched again, so running it again on
a tree where others have since added pairs migrates just those. Anything it cannot migrate is listed with
its reason (and `scripts/i18n_check.py` fails on it). Finally it rewrites the template and catalogs from the
whole tree (dropping entries no code uses) and compiles the `.mo` files.
"""

from __future__ import annotations

import argparse
import ast
import keyword
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import i18n_check as cat

Key = tuple[str | None, str]


def py_str(s: str) -> str:
    """A double-quoted Python literal for `s` (non-ASCII kept as is)."""
    if any(ord(c) < 0x20 and c not in "\n\t\r" for c in s):
        return repr(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") \
        .replace("\r", "\\r") + '"'


class Skip(Exception):
    """A pair this codemod cannot migrate (the reason is the message)."""


@dataclass
class Field:
    expr: ast.expr
    conversion: int
    spec: str

    @property
    def src(self) -> str:
        return ast.unparse(self.expr)

    def key(self, lang: str) -> tuple[str, str]:
        e = self.expr
        if isinstance(e, ast.Attribute) and e.attr == lang:
            return ("text", ast.unparse(e.value))
        return ("value", self.src)

    def as_value(self) -> str:
        """This field alone as a Python expression giving a str (for a per-language value)."""
        src = self.src
        if self.conversion != -1:
            src = {ord("r"): "repr", ord("s"): "str", ord("a"): "ascii"}[self.conversion] + f"({src})"
        if self.spec:
            return f"format({src}, {py_str(self.spec)})"
        return f"str({src})" if self.conversion == -1 else src

    def suffix(self) -> str:
        conv = "" if self.conversion == -1 else "!" + chr(self.conversion)
        return conv + (":" + self.spec if self.spec else "")


def parts_of(node: ast.expr) -> list[str | Field]:
    if isinstance(node, ast.Constant):
        return [node.value]
    assert isinstance(node, ast.JoinedStr)
    parts: list[str | Field] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(value.value)
        else:
            assert isinstance(value, ast.FormattedValue)
            spec = ""
            if value.format_spec is not None:
                if not all(isinstance(v, ast.Constant) for v in value.format_spec.values):  # type: ignore[attr-defined]
                    raise Skip("a format spec with a field inside")
                spec = "".join(v.value for v in value.format_spec.values)  # type: ignore[attr-defined]
            parts.append(Field(value.value, value.conversion, spec))
    return parts


def name_for(expr: ast.expr) -> str:
    node = expr
    while True:
        if isinstance(node, ast.Attribute) and node.attr in ("en", "zh") or isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            break
    raw = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else "value"
    name = raw.strip("_").lower() or "value"
    return "value" if keyword.iskeyword(name) or not name.isidentifier() else name


def templates(en: ast.expr, zh: ast.expr) -> tuple[str, str, list[tuple[str, str]]]:
    """The English and Chinese templates of a pair and the `.format` arguments (name, expression)."""
    en_parts, zh_parts = parts_of(en), parts_of(zh)
    en_fields = [p for p in en_parts if isinstance(p, Field)]
    zh_fields = [p for p in zh_parts if isinstance(p, Field)]
    if not en_fields and not zh_fields:
        return "".join(en_parts), "".join(zh_parts), []  # type: ignore[arg-type]
    en_keys = {f.key("en") for f in en_fields}
    zh_keys = {f.key("zh") for f in zh_fields}
    shared = en_keys & zh_keys
    names: dict[object, str] = {}
    args: list[tuple[str, str]] = []

    def bind(key: object, base: ast.expr, value: str) -> str:
        if key not in names:
            name, n = name_for(base), 2
            taken = set(names.values())
            candidate = name
            while candidate in taken:
                candidate, n = f"{name}{n}", n + 1
            names[key] = candidate
            args.append((candidate, value))
        return names[key]

    def distinct(fields: list[Field], lang: str) -> list[Field]:
        seen, out = set(), []
        for f in fields:
            if f.key(lang) not in shared and f.key(lang) not in seen:
                seen.add(f.key(lang))
                out.append(f)
        return out

    left_en, left_zh = distinct(en_fields, "en"), distinct(zh_fields, "zh")
    one_sided: list[tuple[str, Field]] = []  # fields only one language has (an English article): "" in the other
    if len(left_en) != len(left_zh):
        if left_en and left_zh:
            raise Skip(f"{len(left_en)} English field(s) and {len(left_zh)} Chinese field(s) do not pair up")
        one_sided = [("en", f) for f in left_en] + [("zh", f) for f in left_zh]
        left_en, left_zh = [], []
    pair_of_en = {f.key("en"): i for i, f in enumerate(left_en)}
    pair_of_zh = {f.key("zh"): i for i, f in enumerate(left_zh)}

    def render(parts: list[str | Field], lang: str) -> str:
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part.replace("{", "{{").replace("}", "}}"))
                continue
            key = part.key(lang)
            if key in shared:
                value = key[1]
                name = bind(key, part.expr, value)
                out.append("{" + name + part.suffix() + "}")
            elif one_sided:
                out.append("{" + part.key(lang)[1] + "}")  # named by bind() below
            else:
                i = pair_of_en[key] if lang == "en" else pair_of_zh[key]
                a, b = left_en[i], left_zh[i]
                name = bind(("pair", i), a.expr, f"Text({a.as_value()}, {b.as_value()})")
                out.append("{" + name + "}")
        return "".join(out)

    en_t, zh_t = render(en_parts, "en"), render(zh_parts, "zh")
    for lang, f in one_sided:
        value = f"Text({f.as_value()}, \"\")" if lang == "en" else f"Text(\"\", {f.as_value()})"
        name = bind(("one-sided", lang, f.src), f.expr, value)
        if lang == "en":  # the placeholder must be in both; it is empty in Chinese, so it goes first there
            en_t = en_t.replace("{" + f.key("en")[1] + "}", "{" + name + "}")
            zh_t = "{" + name + "}" + zh_t
        else:
            en_t = "{" + name + "}" + en_t
    return en_t, zh_t, args


@dataclass
class State:
    strings: dict[Key, str]  # every Chinese known so far: the catalog's, then each migrated pair's
    migrated: int = 0
    catalog_entries: int = 0
    wrappers: int = 0
    skipped: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def context_for(self, msgid: str, zh: str, module: str) -> str | None:
        for ctx in (None, module, *(f"{module}.{n}" for n in range(2, 100))):
            known = self.strings.get((ctx, msgid))
            if known is None or known == zh:
                return ctx
        raise Skip("too many different translations of the same English")


class FileEdit:
    def __init__(self, source: str):
        self.source = source
        self.data = source.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.edits: list[tuple[int, int, str]] = []

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset,  # type: ignore[attr-defined]
                self.starts[node.end_lineno - 1] + node.end_col_offset)  # type: ignore[attr-defined]

    def replace(self, node: ast.AST, text: str) -> bool:
        start, end = self.span(node)
        if any(s < end and start < e for s, e, _ in self.edits):
            return False  # nested in another edit: the next pass takes it
        self.edits.append((start, end, text))
        return True

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")

    def result(self) -> str:
        data = self.data
        for start, end, text in sorted(self.edits, reverse=True):
            data = data[:start] + text.encode("utf-8") + data[end:]
        return data.decode("utf-8")


def migrate_wrapper_def(node: ast.FunctionDef, edit: FileEdit) -> bool:
    """`def T(en: str, zh: str) -> Text: return Text(en, zh)` → the one-argument form with a context."""
    args = node.args
    if len(args.args) != 2 or args.kwonlyargs or args.vararg or args.kwarg or len(node.body) != 1:
        return False
    body = node.body[0]
    if not (isinstance(body, ast.Return) and isinstance(body.value, ast.Call) and cat.callee(body.value) == "Text"):
        return False
    first_line = edit.source.splitlines()[node.lineno - 1]
    comment = first_line[first_line.index("#"):] if "#" in first_line else ""
    indent = " " * node.col_offset
    en = args.args[0].arg
    text = (f"def {node.name}({en}: str, *, ctx: str | None = None) -> Text:" + (f"  {comment}" if comment else "")
            + f"\n{indent}    return Text({en}, ctx=ctx)")
    return edit.replace(node, text)


def migrate_source(source: str, rel: str, module: str, state: State) -> str:
    tree = ast.parse(source)
    edit = FileEdit(source)
    texts = cat.text_callees(tree, module)
    wrapper = cat.WRAPPERS.get(module)
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.FunctionDef))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        where = f"{rel}:{node.lineno}"
        if isinstance(node, ast.FunctionDef):
            if node.name == wrapper and migrate_wrapper_def(node, edit):
                state.wrappers += 1
            continue
        name = cat.callee(node)
        try:
            pair = cat.pair_args(node) if name in texts else None
            if pair:
                en_t, zh_t, args = templates(*pair)
                ctx = state.context_for(en_t, zh_t, module)
                call = f"{name}({py_str(en_t)}" + (f", ctx={py_str(ctx)}" if ctx else "") + ")"
                if args:
                    call += ".format(" + ", ".join(f"{k}={v}" for k, v in args) + ")"
                if edit.replace(node, call):
                    state.strings[(ctx, en_t)] = zh_t
                    state.migrated += 1
            elif name == "Catalog" and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[1], ast.Dict):
                catalog = node.args[0].value
                for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                    if not (isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and len(value.elts) == 2
                            and all(cat.is_wording(e) for e in value.elts)):
                        continue
                    en, zh = value.elts
                    if not (isinstance(en, ast.Constant) and isinstance(zh, ast.Constant)):
                        state.skipped.append(f"{rel}:{value.lineno}: an f-string in catalog {catalog!r}")
                        continue
                    ctx = f"{catalog}.{key.value}"
                    known = state.strings.get((ctx, en.value))
                    if known is not None and known != zh.value:
                        state.skipped.append(f"{rel}:{value.lineno}: {ctx} already has another Chinese")
                        continue
                    text = edit.segment(en)
                    if "\n" in text:
                        text = f"({text})"
                    if edit.replace(value, text):
                        state.strings[(ctx, en.value)] = zh.value
                        state.catalog_entries += 1
        except Skip as why:
            state.skipped.append(f"{where}: {why}")
    return edit.result()


def run(root: Path, *, write: bool = True) -> State:
    locale = cat.locale_dir(root)
    state = State(strings=dict(cat.translations(cat.po_path(locale, "zh"))))
    before = dict(state.strings)
    for path in cat.source_files(root):
        rel = path.relative_to(root).as_posix()
        module = cat.module_name(root, path)
        source = original = path.read_text(encoding="utf-8")
        for _ in range(4):  # nested pairs are taken on the next pass
            skipped_before = len(state.skipped)
            new = migrate_source(source, rel, module, state)
            if new == source:
                break
            del state.skipped[skipped_before:]  # said again by the next pass
            source = new
        if source != original:
            compile(source, rel, "exec")  # never write a file that does not parse
            state.files.append(rel)
            if write:
                path.write_text(source, encoding="utf-8")
    if write:
        found = cat.extract(root)
        added = {k: v for k, v in state.strings.items() if before.get(k) != v}
        cat.sync(root, found, added)
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=cat.ROOT, help="the source tree (default: this checkout)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is left to do")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    state = run(args.root.resolve(), write=not args.check)
    for line in state.skipped:
        print(f"left as it is: {line}")
    verb = "would migrate" if args.check else "migrated"
    print(f"{verb} {state.migrated} inline pair(s), {state.catalog_entries} catalog entr(y/ies) and "
          f"{state.wrappers} wrapper(s) in {len(state.files)} file(s) in {time.perf_counter() - started:.1f} s")
    return 1 if args.check and (state.files or state.skipped) else 0


if __name__ == "__main__":
    sys.exit(main())
