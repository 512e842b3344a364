"""The declarative screen model: apps describe a screen as a tree of `Node`s built from their state; the
engine lays the tree out into `Box`es (device pixels), and that ONE laid-out tree produces the screenshot
(render.py), the uiautomator XML (`to_xml`), the UIElement list (`to_elements`) and the tap targets
(`hit_test`). Nothing else draws or reports the screen, so pixels, XML and hit-testing cannot disagree.
The tap target is chosen by `assistant_core.hittest` over that same element list: the function the safety
gate uses on the observation, so the gate and the phone agree on what is under every point.

Layout rules (kept deliberately small):
- COLUMN / LIST / DIALOG stack their children vertically at full width (minus padding); children with
  `grow=True` share the height left over. A LIST is scrollable: its children are offset by the scroll
  offset the world keeps under the list's `scroll_key`; what falls outside the list's viewport is clipped
  out of the XML, the elements and the hit-test, exactly like RecyclerView.
- ROW splits its width among children by `weight`; its height is the tallest child.
- GRID places children in `columns` equal cells of `cell_height`.
- Leaf heights come from the kind and the text (wrapped to the width), scaled by the font scale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from assistant_core.hittest import touch_target_index
from assistant_core.types import UIElement


class Kind(StrEnum):
    COLUMN = "column"
    ROW = "row"
    GRID = "grid"
    LIST = "list"
    LABEL = "label"
    TITLE = "title"
    BUTTON = "button"
    SWITCH = "switch"
    CHECKBOX = "checkbox"
    ITEM = "item"
    FIELD = "field"
    ICON = "icon"
    IMAGE = "image"
    DIALOG = "dialog"
    SLIDER = "slider"
    TOOLBAR = "toolbar"
    SPACER = "spacer"
    SCRIM = "scrim"
    KEY = "key"
    BUBBLE = "bubble"


class Style(StrEnum):
    NORMAL = "normal"
    PRIMARY = "primary"
    DANGER = "danger"
    MUTED = "muted"
    OUTGOING = "outgoing"
    INCOMING = "incoming"
    WARNING = "warning"


CLASS_NAMES: dict[Kind, str] = {
    Kind.COLUMN: "android.widget.LinearLayout",
    Kind.ROW: "android.widget.LinearLayout",
    Kind.GRID: "android.widget.GridView",
    Kind.LIST: "androidx.recyclerview.widget.RecyclerView",
    Kind.LABEL: "android.widget.TextView",
    Kind.TITLE: "android.widget.TextView",
    Kind.BUTTON: "android.widget.Button",
    Kind.SWITCH: "android.widget.Switch",
    Kind.CHECKBOX: "android.widget.CheckBox",
    Kind.ITEM: "android.widget.LinearLayout",
    Kind.FIELD: "android.widget.EditText",
    Kind.ICON: "android.widget.ImageView",
    Kind.IMAGE: "android.widget.ImageView",
    Kind.DIALOG: "android.widget.FrameLayout",
    Kind.SLIDER: "android.widget.SeekBar",
    Kind.TOOLBAR: "android.view.ViewGroup",
    Kind.SPACER: "android.view.View",
    Kind.SCRIM: "android.widget.FrameLayout",
    Kind.KEY: "android.widget.Button",
    Kind.BUBBLE: "android.widget.TextView",
}


@dataclass(slots=True)
class FieldBind:
    """Where a text field's value lives: attribute `attr` of the state object `obj`."""

    obj: object
    attr: str

    def get(self) -> str:
        return getattr(self.obj, self.attr)

    def set(self, value: str) -> None:
        setattr(self.obj, self.attr, value)


Handler = Callable[[], None]


@dataclass(slots=True, eq=False)
class Node:
    """One element of a screen description. Apps build these; the engine lays them out.

    `on_tap` / `on_long` / `on_double` run on gestures; a FIELD has `bind` (its value) and optional
    `on_submit` (the Enter key); a SWITCH/CHECKBOX has `checked`; a SLIDER has `value` in [0, 1] and
    `on_slide(value)`; `on_fling(direction)` takes horizontal swipes. `copyable` labels offer a Copy menu on long press. `image` is a key the world's
    image source turns into a PIL image (icons and photos).
    """

    kind: Kind
    text: str = ""
    rid: str = ""
    desc: str = ""
    children: list[Node] = field(default_factory=list)
    on_tap: Handler | None = None
    on_long: Handler | None = None
    on_double: Handler | None = None
    checked: bool | None = None
    enabled: bool = True
    selected: bool = False
    bind: FieldBind | None = None
    on_submit: Handler | None = None
    hint: str = ""
    password: bool = False
    height: int = 0
    grow: bool = False
    weight: float = 1.0
    scroll_key: str = ""
    style: Style = Style.NORMAL
    sub: str = ""
    image: str = ""
    value: float = 0.0
    on_slide: Callable[[float], None] | None = None
    copyable: bool = False
    columns: int = 4
    cell_height: int = 0
    blocking: bool = False
    on_fling: Callable[[int], None] | None = None  # horizontal swipe: -1 towards the left, +1 right

    @property
    def interactive(self) -> bool:
        return bool(self.on_tap or self.on_long or self.on_double or self.bind is not None or self.on_slide)


# --- builders: short names keep app modules readable -------------------------------------------------


def column(*children: Node | None, **kw) -> Node:
    return Node(Kind.COLUMN, children=[c for c in children if c is not None], **kw)


def row(*children: Node | None, **kw) -> Node:
    return Node(Kind.ROW, children=[c for c in children if c is not None], **kw)


def vlist(children: list[Node], scroll_key: str = "main", **kw) -> Node:
    return Node(
        Kind.LIST, children=[c for c in children if c is not None], scroll_key=scroll_key, grow=True, **kw
    )


def grid(children: list[Node], columns: int = 4, cell_height: int = 300, **kw) -> Node:
    return Node(Kind.GRID, children=children, columns=columns, cell_height=cell_height, **kw)


def label(text: str, **kw) -> Node:
    return Node(Kind.LABEL, text=text, **kw)


def title(text: str, **kw) -> Node:
    return Node(Kind.TITLE, text=text, **kw)


def button(text: str, on_tap: Handler | None, **kw) -> Node:
    return Node(Kind.BUTTON, text=text, on_tap=on_tap, **kw)


def switch(text: str, checked: bool, on_tap: Handler, **kw) -> Node:
    return Node(Kind.SWITCH, text=text, checked=checked, on_tap=on_tap, **kw)


def checkbox(text: str, checked: bool, on_tap: Handler, **kw) -> Node:
    return Node(Kind.CHECKBOX, text=text, checked=checked, on_tap=on_tap, **kw)


def item(text: str, sub: str = "", on_tap: Handler | None = None, **kw) -> Node:
    return Node(Kind.ITEM, text=text, sub=sub, on_tap=on_tap, **kw)


def text_field(bind: FieldBind, hint: str, rid: str, **kw) -> Node:
    return Node(Kind.FIELD, bind=bind, hint=hint, rid=rid, **kw)


def icon(desc: str, on_tap: Handler | None = None, image: str = "", **kw) -> Node:
    return Node(Kind.ICON, desc=desc, on_tap=on_tap, image=image, **kw)


def spacer(height: int = 24) -> Node:
    return Node(Kind.SPACER, height=height)


def toolbar(text: str, on_back: Handler | None = None, actions: tuple[Node, ...] = (), **kw) -> Node:
    """The app bar: a Navigate-up arrow when `on_back` is given, the title, and action icons."""
    kids: list[Node] = []
    if on_back is not None:
        kids.append(
            Node(Kind.ICON, desc="Navigate up", on_tap=on_back, image="sys:back", rid="android:id/home")
        )
    kids.append(Node(Kind.TITLE, text=text, rid="android:id/title"))
    kids.extend(actions)
    return Node(Kind.TOOLBAR, children=kids, **kw)


# --- metrics -------------------------------------------------------------------------------------------

BODY_PX = 44
TITLE_PX = 58
SMALL_PX = 34
PAD = 40


def font_px(kind: Kind, scale: float, *, small: bool = False) -> int:
    base = SMALL_PX if small else (TITLE_PX if kind in (Kind.TITLE, Kind.TOOLBAR) else BODY_PX)
    return max(12, int(base * scale))


def char_width(ch: str, px: int) -> float:
    """Approximate advance of one character (CJK full width, Latin about 0.55 em)."""
    o = ord(ch)
    if o >= 0x2E80:
        return px * 1.0
    if ch in "mwMW@%":
        return px * 0.85
    if ch in "il.,:;'!|":
        return px * 0.3
    return px * 0.55


_WRAP_CACHE: dict[tuple[str, int, int, int], list[str]] = {}


def wrap(text: str, width: int, px: int, max_lines: int = 0) -> list[str]:
    """Greedy word wrap (CJK breaks anywhere); honours newlines. `max_lines` > 0 truncates with '…'.
    Results are memoised (a pure function of its arguments); callers must not mutate the list."""
    key = (text, width, px, max_lines)
    hit = _WRAP_CACHE.get(key)
    if hit is not None:
        return hit
    if len(_WRAP_CACHE) > 20000:
        _WRAP_CACHE.clear()
    out = _WRAP_CACHE[key] = _wrap(text, width, px, max_lines)
    return out


def _wrap(text: str, width: int, px: int, max_lines: int) -> list[str]:
    lines: list[str] = []
    for para in text.split("\n"):
        cur = ""
        cur_w = 0.0
        word = ""
        word_w = 0.0
        for ch in para + "\0":
            if ch == "\0" or ch == " " or ord(ch) >= 0x2E80:
                # flush the pending word
                if ch != "\0" and ord(ch) >= 0x2E80:
                    word += ch
                    word_w += char_width(ch, px)
                if cur_w + word_w > width and cur:
                    lines.append(cur.rstrip())
                    cur, cur_w = "", 0.0
                while word_w > width and word:  # a single overlong word: hard-break it
                    cut, cw = "", 0.0
                    for c in word:
                        if cw + char_width(c, px) > width and cut:
                            break
                        cut += c
                        cw += char_width(c, px)
                    lines.append(cut)
                    word = word[len(cut) :]
                    word_w -= cw
                cur += word
                cur_w += word_w
                word, word_w = "", 0.0
                if ch == " ":
                    cur += " "
                    cur_w += char_width(" ", px)
            else:
                word += ch
                word_w += char_width(ch, px)
        lines.append(cur.rstrip())
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: max(0, len(lines[-1]) - 1)] + "…"
    return lines or [""]


# --- laid-out boxes ------------------------------------------------------------------------------------

Rect = tuple[int, int, int, int]


@dataclass(slots=True, eq=False)
class Box:
    """A node placed on the screen. `rect` is its full extent, `clip` the visible part (what uiautomator
    reports as bounds); `lines` is the wrapped text the renderer draws."""

    node: Node
    rect: Rect
    clip: Rect
    package: str
    children: list[Box] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    sub_lines: list[str] = field(default_factory=list)
    px: int = BODY_PX
    scroll_max: int = 0
    focused: bool = False
    index: int = 0
    scroll_id: str = ""
    secure: bool = False
    # per-root caches (roots of static system UI are reused across screens)
    xml_frag: tuple[int, str] | None = None
    elems: list[UIElement] | None = None
    elem_boxes: list[Box | None] | None = None  # the box behind each of `elems` (None: a synthetic TextView)
    static: bool = False  # reused across screens: the renderer may keep its pixels as a tile
    tiles: dict[bool, object] | None = None

    @property
    def visible(self) -> bool:
        left, top, right, bottom = self.clip
        return right > left and bottom > top


def _intersect(a: Rect, b: Rect) -> Rect:
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    if right <= left or bottom <= top:
        return (left, top, left, top)
    return (left, top, right, bottom)


@dataclass(slots=True)
class LayoutContext:
    """What layout needs from the world: font scale, the focused field id, and scroll offsets."""

    scale: float
    focused_rid: str
    scroll: dict[str, int]
    scroll_prefix: str
    package: str
    heights: dict[tuple[int, int], int] = field(default_factory=dict)  # measure() memo for one layout pass


def measure(node: Node, width: int, ctx: LayoutContext) -> int:
    """Preferred height of a node at `width` (memoised per layout pass: parents measure their children
    and then lay them out, which measures again)."""
    key = (id(node), width)
    hit = ctx.heights.get(key)
    if hit is None:
        hit = ctx.heights[key] = _measure(node, width, ctx)
    return hit


def _measure(node: Node, width: int, ctx: LayoutContext) -> int:
    k = node.kind
    s = ctx.scale
    if node.height and k not in (Kind.LIST,):
        return node.height
    if k in (Kind.COLUMN, Kind.DIALOG):
        pad = PAD if k is Kind.DIALOG else 0
        return sum(measure(c, width - 2 * pad, ctx) for c in node.children) + 2 * pad
    if k is Kind.LIST:
        return node.height or sum(measure(c, width, ctx) for c in node.children)
    if k is Kind.ROW:
        widths = _row_widths(node, width)
        return max((measure(c, w, ctx) for c, w in zip(node.children, widths, strict=True)), default=0)
    if k is Kind.GRID:
        rows = (len(node.children) + node.columns - 1) // node.columns
        return rows * node.cell_height
    if k in (Kind.LABEL, Kind.TITLE, Kind.BUBBLE):
        px = font_px(k, s, small=node.style is Style.MUTED)
        inner = width - 2 * PAD - (160 if k is Kind.BUBBLE else 0)
        n = len(wrap(node.text, inner, px))
        return int(n * px * 1.35) + (56 if k is Kind.BUBBLE else 28)
    if k is Kind.ITEM:
        return int((150 if node.sub else 120) * max(1.0, s))
    if k in (Kind.BUTTON, Kind.FIELD):
        return int(132 * max(1.0, s))
    if k in (Kind.SWITCH, Kind.CHECKBOX, Kind.SLIDER):
        return int(150 * max(1.0, s))
    if k is Kind.TOOLBAR:
        return 168
    if k is Kind.ICON:
        return 140
    if k is Kind.IMAGE:
        return 600
    if k is Kind.SPACER:
        return 24
    if k is Kind.KEY:
        return 140
    return 100


def _row_widths(node: Node, width: int) -> list[int]:
    total = sum(c.weight for c in node.children) or 1.0
    widths = [int(width * c.weight / total) for c in node.children]
    if widths:
        widths[-1] += width - sum(widths)
    return widths


def layout(node: Node, rect: Rect, clip: Rect, ctx: LayoutContext, *, secure: bool = False) -> Box:
    """Place `node` in `rect` (visible part `clip`) and its children recursively."""
    clip = _intersect(rect, clip)
    box = Box(node, rect, clip, ctx.package, secure=secure)
    k = node.kind
    left, top, right, bottom = rect
    width = right - left
    if k in (
        Kind.LABEL,
        Kind.TITLE,
        Kind.BUBBLE,
        Kind.BUTTON,
        Kind.ITEM,
        Kind.SWITCH,
        Kind.CHECKBOX,
        Kind.KEY,
    ):
        small = node.style is Style.MUTED and k is Kind.LABEL
        box.px = font_px(k, ctx.scale, small=small)
        inner = (
            width
            - 2 * PAD
            - (160 if k is Kind.BUBBLE else 0)
            - (200 if k in (Kind.SWITCH, Kind.CHECKBOX) else 0)
        )
        if k in (Kind.KEY, Kind.BUTTON):  # centred captions need no side padding, only the button margin
            inner = width - 32
        if k in (Kind.LABEL, Kind.TITLE, Kind.BUBBLE):
            box.lines = wrap(node.text, inner, box.px)
        else:
            box.lines = wrap(node.text, inner, box.px, max_lines=1)
        if node.sub:
            box.sub_lines = wrap(node.sub, inner, font_px(k, ctx.scale, small=True), max_lines=1)
    elif k is Kind.FIELD:
        box.px = font_px(k, ctx.scale)
        box.focused = bool(node.rid) and node.rid == ctx.focused_rid
        value = node.bind.get() if node.bind is not None else ""
        shown = "•" * len(value) if node.password else value
        rows = max(1, (rect[3] - rect[1] - 40) // int(box.px * 1.35))
        box.lines = wrap(shown or node.hint, width - 2 * PAD - 60, box.px, max_lines=rows)
    elif k is Kind.TOOLBAR:
        box.px = font_px(k, ctx.scale)
        x = left
        for i, c in enumerate(node.children):
            if c.kind is Kind.ICON:
                w = 150
            else:
                w = max(200, width - (x - left) - 150 * (len(node.children) - i - 1))
            box.children.append(_leaf(c, (x, top, x + w, bottom), clip, ctx, i, secure))
            x += w
        return box
    elif k is Kind.ROW:
        x = left
        for i, (c, w) in enumerate(zip(node.children, _row_widths(node, width), strict=True)):
            h = measure(c, w, ctx)
            child = layout(c, (x, top, x + w, top + h), clip, ctx, secure=secure)
            child.index = i
            box.children.append(child)
            x += w
        return box
    elif k is Kind.GRID:
        cw = width // max(1, node.columns)
        for i, c in enumerate(node.children):
            r, col = divmod(i, node.columns)
            cell = (
                left + col * cw,
                top + r * node.cell_height,
                left + (col + 1) * cw,
                top + (r + 1) * node.cell_height,
            )
            child = layout(c, cell, clip, ctx, secure=secure)
            child.index = i
            box.children.append(child)
        return box
    elif k in (Kind.COLUMN, Kind.DIALOG, Kind.LIST, Kind.SCRIM):
        pad = PAD if k is Kind.DIALOG else 0
        hpad = 60 if (k is Kind.SCRIM and node.style is Style.NORMAL) else pad
        inner_w = width - 2 * hpad
        heights = [measure(c, inner_w, ctx) for c in node.children]
        if k is Kind.LIST:
            content = sum(heights)
            sid = f"{ctx.scroll_prefix}/{node.scroll_key}"
            box.scroll_id = sid
            box.scroll_max = max(0, content - (bottom - top))
            offset = min(max(0, ctx.scroll.get(sid, 0)), box.scroll_max)
            y = top - offset
        else:
            growers = [i for i, c in enumerate(node.children) if c.grow]
            if growers:
                fixed = sum(h for i, h in enumerate(heights) if i not in growers)
                share = max(0, (bottom - top - 2 * pad - fixed) // len(growers))
                for i in growers:
                    heights[i] = share
            y = top + pad
            if k is Kind.SCRIM and node.children and node.style is Style.NORMAL:  # centre a dialog
                y = top + max(0, (bottom - top - sum(heights)) // 2)
        for i, (c, h) in enumerate(zip(node.children, heights, strict=True)):
            child = layout(c, (left + hpad, y, right - hpad, y + h), box.clip, ctx, secure=secure)
            child.index = i
            box.children.append(child)
            y += h
        return box
    return box


def _leaf(node: Node, rect: Rect, clip: Rect, ctx: LayoutContext, index: int, secure: bool) -> Box:
    b = layout(node, rect, clip, ctx, secure=secure)
    b.index = index
    return b


# --- walking, hit-testing, XML, elements ------------------------------------------------------------------


def walk(box: Box):
    """Depth-first, paint order."""
    stack = [box]
    while stack:
        b = stack.pop()
        yield b
        stack.extend(reversed(b.children))


def hit_test(roots: list[Box], x: int, y: int) -> Box | None:
    """The box a tap at (x, y) activates: the element `assistant_core.hittest` picks from the screen's
    element list (topmost receiver or touch barrier; later roots paint over earlier ones), as its box."""
    elements = to_elements(roots)
    i = touch_target_index(elements, x, y)
    if i is None:
        return None
    box = element_boxes(roots)[i]
    assert box is not None, "a synthetic TextView never takes touches"
    return box


def find_scrollable(roots: list[Box], x: int, y: int) -> Box | None:
    for root in reversed(roots):
        found: Box | None = None
        for b in walk(root):
            left, top, right, bottom = b.clip
            inside = left <= x < right and top <= y < bottom
            if inside and (b.scroll_id or (b.node.blocking and found is None)):
                found = b
        if found is not None:
            return found if found.scroll_id else None
    return None


def element_text(box: Box) -> str:
    n = box.node
    if n.kind is Kind.FIELD:
        value = n.bind.get() if n.bind is not None else ""
        if n.password:
            return "•" * len(value)
        return value or n.hint
    if n.kind is Kind.SLIDER:
        return n.text
    return n.text


def _class_of(n: Node) -> str:
    """The class the dump names: a view that pages sideways (`on_fling`) is a ViewPager, so the gate
    knows it takes horizontal moves (assistant_core.hittest.scroll_axis)."""
    return "androidx.viewpager.widget.ViewPager" if n.on_fling is not None else CLASS_NAMES[n.kind]


def _flags(box: Box) -> tuple[bool, ...]:
    n = box.node
    checkable = n.checked is not None
    clickable = bool(n.on_tap or n.bind is not None or n.on_slide or n.on_double)
    focusable = n.bind is not None or clickable
    return (
        checkable,
        bool(n.checked),
        clickable,
        n.enabled,
        focusable,
        box.focused,
        bool(box.scroll_id) and box.scroll_max > 0 or n.on_fling is not None,
        bool(n.on_long or n.copyable or n.bind is not None),
        n.password,
        n.selected,
    )


def _synthetic_children(box: Box) -> list[tuple[str, Rect, str]]:
    """ITEMs and SWITCHes show their texts as TextView children, as real list rows do."""
    n = box.node
    if n.kind is Kind.ITEM and (n.text or n.sub):
        left, top, right, bottom = box.rect
        mid = (top + bottom) // 2 if n.sub else bottom
        out = [(n.text, (left + PAD, top, right - PAD, mid), "title")]
        if n.sub:
            out.append((n.sub, (left + PAD, mid, right - PAD, bottom), "summary"))
        return out
    return []


_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;", "\n": "&#10;"})


def _b(v: bool) -> str:
    return "true" if v else "false"


def to_xml(roots: list[Box], width: int, height: int) -> str:
    """The XML `uiautomator dump` writes, for the visible boxes."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"]
    out.append(
        '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="android" '
        'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
        'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
        f'bounds="[0,0][{width},{height}]">'
    )
    for i, root in enumerate(roots):
        if root.xml_frag is None or root.xml_frag[0] != i:
            root.index = i
            frag: list[str] = []
            _xml_box(root, frag)
            root.xml_frag = (i, "".join(frag))
        out.append(root.xml_frag[1])
    out.append("</node></hierarchy>")
    return "".join(out)


_FLAG_ATTRS: dict[tuple[bool, ...], str] = {}


def _flag_attrs(flags: tuple[bool, ...]) -> str:
    hit = _FLAG_ATTRS.get(flags)
    if hit is None:
        ck, cd, cl, en, fo, fd, sc, lc, pw, se = flags
        hit = _FLAG_ATTRS[flags] = (
            f'checkable="{_b(ck)}" checked="{_b(cd)}" clickable="{_b(cl)}" enabled="{_b(en)}" focusable="{_b(fo)}" '
            f'focused="{_b(fd)}" scrollable="{_b(sc)}" long-clickable="{_b(lc)}" password="{_b(pw)}" selected="{_b(se)}"'
        )
    return hit


def _xml_attrs(
    index: int, text: str, rid: str, cls: str, pkg: str, desc: str, flags: tuple[bool, ...], r: Rect
) -> str:
    if text:
        text = text.translate(_ESC)
    if desc:
        desc = desc.translate(_ESC)
    return (
        f'<node index="{index}" text="{text}" resource-id="{rid}" class="{cls}" package="{pkg}" '
        f'content-desc="{desc}" {_flag_attrs(flags)} bounds="[{r[0]},{r[1]}][{r[2]},{r[3]}]"'
    )


_NO_FLAGS = (False, False, False, True, False, False, False, False, False, False)


def _xml_box(box: Box, out: list[str]) -> None:
    if not box.visible:
        return
    n = box.node
    text = "" if n.kind is Kind.ITEM else element_text(box)
    out.append(
        _xml_attrs(box.index, text, n.rid, _class_of(n), box.package, n.desc, _flags(box), box.clip)
    )
    if n.blocking:  # not a uiautomator attribute: the simulated phone dumps every window in one tree
        out.append(' blocks-touch="true"')
    synth = _synthetic_children(box)
    if not box.children and not synth:
        out.append(" />")
        return
    out.append(">")
    for j, (t, r, suffix) in enumerate(synth):
        c = _intersect(r, box.clip)
        if c[2] > c[0] and c[3] > c[1]:
            rid = f"android:id/{suffix}"
            out.append(
                _xml_attrs(j, t, rid, "android.widget.TextView", box.package, "", _NO_FLAGS, c) + " />"
            )
    for child in box.children:
        _xml_box(child, out)
    out.append("</node>")


def to_elements(roots: list[Box]) -> list[UIElement]:
    """The same visible boxes as the XML, in the same order, as UIElements."""
    out: list[UIElement] = []
    for i, root in enumerate(roots):
        if root.elems is None or root.index != i:
            root.index = i
            root.elems, root.elem_boxes = _root_elements(root)
        out.extend(root.elems)
    return out


def element_boxes(roots: list[Box]) -> list[Box | None]:
    """The box behind each element of `to_elements(roots)`, index for index (None for the synthetic
    TextViews of list rows)."""
    to_elements(roots)
    out: list[Box | None] = []
    for root in roots:
        out.extend(root.elem_boxes or ())
    return out


_new_element = object.__new__


def _element(**fields: object) -> UIElement:
    """A UIElement without the frozen-dataclass __init__ (this is the hot path of every observation).
    Every field is given, so the instance is exactly what UIElement(**fields) would build."""
    e = _new_element(UIElement)
    e.__dict__.update(fields)
    return e


def _root_elements(root: Box) -> tuple[list[UIElement], list[Box | None]]:
    out: list[UIElement] = []
    boxes: list[Box | None] = []
    depths = {id(root): 1}  # under the dump's window frame, as in to_xml
    for b in walk(root):
        depth = depths[id(b)]
        for c in b.children:
            depths[id(c)] = depth + 1
        if not b.visible:
            continue
        n = b.node
        ck, cd, cl, en, fo, fd, sc, lc, pw, se = _flags(b)
        out.append(
            _element(
                bounds=b.clip,
                text="" if n.kind is Kind.ITEM else element_text(b),
                content_desc=n.desc,
                resource_id=n.rid,
                class_name=_class_of(n),
                package=b.package,
                clickable=cl,
                long_clickable=lc,
                checkable=ck,
                checked=cd,
                focusable=fo,
                focused=fd,
                enabled=en,
                selected=se,
                scrollable=sc,
                password=pw,
                index=b.index,
                blocks_touch=n.blocking,
                depth=depth,
            )
        )
        boxes.append(b)
        for j, (t, r, suffix) in enumerate(_synthetic_children(b)):
            c = _intersect(r, b.clip)
            if c[2] > c[0] and c[3] > c[1]:
                out.append(
                    _element(
                        bounds=c,
                        text=t,
                        content_desc="",
                        resource_id=f"android:id/{suffix}",
                        class_name="android.widget.TextView",
                        package=b.package,
                        clickable=False,
                        long_clickable=False,
                        checkable=False,
                        checked=False,
                        focusable=False,
                        focused=False,
                        enabled=True,
                        selected=False,
                        scrollable=False,
                        password=False,
                        index=j,
                        blocks_touch=False,
                        depth=depth + 1,
                    )
                )
                boxes.append(None)
    return out, boxes
