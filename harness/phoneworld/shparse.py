"""The simulated phone's shell grammar and its screen dump, split from shell.py (which runs the commands).

`parse(line)` splits a command line into pipelines of simple commands (`;`, `&&`, `||`, `&`, `|`,
`NAME=value` prefixes, quotes, `2>/dev/null`/`2>&1`); `decode_input_text` reads ADBKeyboard's base64 text;
`window_dump(world)` is what `uiautomator dump [--windows]` writes; `quote` is sh quoting. shell.py
re-exports them.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from harness.phoneworld.adbservices import ShellIO


class _CaptureIO:
    """Collects stdout (for `|` and `>`), passes stderr and cancellation through."""

    def __init__(self, parent: ShellIO, *, drop_err: bool = False, err_to_out: bool = False):
        self.parent = parent
        self.buffer = bytearray()
        self.drop_err = drop_err
        self.err_to_out = err_to_out

    def out(self, data: bytes | str) -> None:
        self.buffer += data.encode() if isinstance(data, str) else data

    def err(self, data: bytes | str) -> None:
        if self.err_to_out:
            self.out(data)
        elif not self.drop_err:
            self.parent.err(data)

    def read_stdin(self, timeout: float | None = None) -> bytes | None:
        return self.parent.read_stdin(timeout)

    def cancelled(self) -> bool:
        return self.parent.cancelled()


@dataclass(frozen=True)
class _Simple:
    env: dict[str, str]
    argv: list[str]
    stdout_file: str | None = None
    stdin_file: str | None = None
    drop_err: bool = False
    err_to_out: bool = False


_OPS = {";", "&&", "||", "&", "|"}
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_ERR_REDIRECT = re.compile(r"(?<![^\s;&|])2>(&1|\s*/dev/null)")


def parse(line: str) -> list[tuple[str, list[_Simple]]]:
    """Split a command line into (joiner, pipeline) pairs; the joiner is what precedes the pipeline."""

    def repl(m: re.Match) -> str:
        return " \x01ERR2OUT\x01 " if m.group(1) == "&1" else " \x01ERRNULL\x01 "

    lexer = shlex.shlex(_ERR_REDIRECT.sub(repl, line), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens = list(lexer)
    result: list[tuple[str, list[_Simple]]] = []
    joiner = ";"
    pipeline: list[_Simple] = []
    words: list[str] = []

    def flush_simple() -> None:
        nonlocal words
        if not words:
            return
        env: dict[str, str] = {}
        argv: list[str] = []
        out_file = in_file = None
        drop_err = err_to_out = False
        it = iter(words)
        for w in it:
            if w == ">" or w == ">>":
                out_file = next(it, None)
            elif w == "<":
                in_file = next(it, None)
            elif w == "\x01ERRNULL\x01":
                drop_err = True
            elif w == "\x01ERR2OUT\x01":
                err_to_out = True
            elif not argv and _ENV_RE.match(w):
                key, _, value = w.partition("=")
                env[key] = value
            else:
                argv.append(w)
        pipeline.append(_Simple(env, argv, out_file, in_file, drop_err, err_to_out))
        words = []

    for tok in tokens:
        if tok in _OPS:
            flush_simple()
            if tok == "|":
                continue
            if pipeline:
                result.append((joiner, pipeline))
            pipeline = []
            joiner = ";" if tok == "&" else tok
        elif tok == ">>":
            words.append(">")
        else:
            words.append(tok)
    flush_simple()
    if pipeline:
        result.append((joiner, pipeline))
    return result


def decode_input_text(arg: str) -> str:
    """What Android's `input text` types for its argument: `%s` is a space."""
    return arg.replace("%s", " ")


def _is_toast(root) -> bool:
    return root.package == "android" and root.rect[0] > 0 and any(
        c.node.rid == "android:id/message" for c in root.children
    )


def window_dump(world, *, all_windows: bool = False) -> str | None:
    """What `uiautomator dump [--windows]` writes (AOSP cmds/uiautomator DumpCommand and
    AccessibilityNodeInfoDumper): by default the active window only, its root node being the foreground
    window's (the app, a dialog over it, the shade or the keyguard; never the status bar, navigation bar,
    keyboard or a toast); with --windows every window, top first, as
    <displays><display id="0"><window ...><hierarchy ...>. None when there is no window (screen off)."""
    from harness.phoneworld.screen import HEIGHT, KEYBOARD_PKG, NAV_H, STATUS_H, SYSTEMUI
    from harness.phoneworld.ui import _xml_box

    roots = world.screen().roots
    head = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"

    def bar(r) -> bool:
        return r.package == SYSTEMUI and (r.rect[3] <= STATUS_H or r.rect[1] >= HEIGHT - NAV_H)

    def node_xml(r) -> str:
        # Each window's root is node 0 of its own hierarchy; the box keeps its index among the world's roots.
        saved = r.index
        r.index = 0
        frag: list[str] = []
        try:
            _xml_box(r, frag)
        finally:
            r.index = saved
        return "".join(frag)

    candidates = [r for r in roots if not bar(r) and r.package != KEYBOARD_PKG and not _is_toast(r)]
    if not candidates:
        return None
    active = candidates[-1]
    if not all_windows:
        return f'{head}<hierarchy rotation="0">{node_xml(active)}</hierarchy>'
    out = [head, "<displays><display id=\"0\">"]
    for i, r in enumerate(reversed(roots)):
        if r.package == KEYBOARD_PKG:
            kind = "TYPE_INPUT_METHOD"
        elif bar(r) or r.package == SYSTEMUI and r is not active:
            kind = "TYPE_SYSTEM"
        else:
            kind = "TYPE_APPLICATION"
        left, top, right, bottom = r.rect
        is_active = str(r is active).lower()
        out.append(
            f'<window index="{i}" title="{r.package}" bounds="[{left},{top}][{right},{bottom}]" active="{is_active}" '
            f'focused="{is_active}" accessibility-focused="false" id="{len(roots) - i}" layer="{len(roots) - i}" '
            f'type="{kind}"><hierarchy rotation="0">{node_xml(r)}</hierarchy></window>'
        )
    out.append("</display></displays>")
    return "".join(out)


def quote(text: str) -> str:
    return shlex.quote(text)
