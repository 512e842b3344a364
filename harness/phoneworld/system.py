"""System UI as screen trees: status bar, navigation bar, launcher (home), recents, lock screen,
notification shade, soft keyboard, dialogs and menus, and `compose()`, which stacks them with the
foreground app into the laid-out `Screen`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.phoneworld.ui import (
    Kind,
    Node,
    Style,
    button,
    column,
    grid,
    icon,
    item,
    label,
    row,
    switch,
    title,
    vlist,
)

if TYPE_CHECKING:
    from harness.phoneworld.screen import Overlay, Screen
    from harness.phoneworld.screen import WorldAPI as World

KEY_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def compose(w: World) -> Screen:
    from harness.phoneworld.screen import (
        HEIGHT,
        KEYBOARD_H,
        KEYBOARD_PKG,
        LAUNCHER,
        NAV_H,
        STATUS_H,
        SYSTEMUI,
        WIDTH,
        Screen,
    )

    s = w.sys
    if not s.screen_on:
        return Screen(roots=[], secure=False, off=True)
    st = w.apps["com.android.settings"].state
    status_key = (
        "status",
        w.now.strftime("%H:%M"),
        st.wifi,
        st.airplane,
        s.battery,
        w.language,
        w.font_scale,
    )  # type: ignore[attr-defined]
    roots = [w.cached_root(status_key, lambda: status_bar(w), (0, 0, WIDTH, STATUS_H), SYSTEMUI, "status")]
    secure = False
    if s.locked:
        roots.append(w.layout_root(lock_screen(w), (0, STATUS_H, WIDTH, HEIGHT), SYSTEMUI, "lock"))
        return Screen(roots=roots, secure=False, off=False)
    content_bottom = HEIGHT - NAV_H
    focus = w._focus_valid()
    keyboard = bool(focus and s.keyboard_visible and not s.recents_open and not s.shade_open)
    if keyboard:
        content_bottom -= KEYBOARD_H
    area = (0, STATUS_H, WIDTH, content_bottom)
    if s.recents_open:
        roots.append(w.layout_root(recents(w), area, LAUNCHER, "recents"))
    elif w.fg is None:
        home_key = ("home", w.language, w.font_scale, w.now.date(), area)
        roots.append(w.cached_root(home_key, lambda: home(w), area, LAUNCHER, "home"))
    else:
        app = w.apps[w.fg]
        route = w.route_of(w.fg)
        secure = app.is_secure(route)
        roots.append(
            w.layout_root(app.build(route), area, w.fg, f"{w.fg}/{route.screen}/{route.arg}", secure=secure)
        )
    roots.append(
        w.cached_root(
            ("nav", w.language), lambda: nav_bar(w), (0, HEIGHT - NAV_H, WIDTH, HEIGHT), SYSTEMUI, "nav"
        )
    )
    if keyboard:
        roots.append(
            w.cached_root(
                ("kbd", w.language, s.keyboard_shift, w.font_scale),
                lambda: keyboard_tree(w),
                (0, content_bottom, WIDTH, HEIGHT - NAV_H),
                KEYBOARD_PKG,
                "kbd",
            )
        )
    full = (0, STATUS_H, WIDTH, HEIGHT - NAV_H - (KEYBOARD_H if keyboard else 0))
    for ov in w.overlays:
        roots.append(w.layout_root(ov.build(), full, ov.package, "overlay"))
        secure = secure or ov.secure
    if w.toast_text:
        roots.append(
            w.layout_root(
                column(label(w.toast_text, style=Style.WARNING, rid="android:id/message")),
                (120, HEIGHT - NAV_H - 300, WIDTH - 120, HEIGHT - NAV_H - 160),
                "android",
                "toast",
            )
        )
    if s.shade_open:
        roots.append(w.layout_root(shade(w), (0, STATUS_H, WIDTH, HEIGHT), SYSTEMUI, "shade"))
    return Screen(roots=roots, secure=secure, off=False)


def status_bar(w: World) -> Node:
    settings = w.apps["com.android.settings"].state
    wifi_on = bool(settings.wifi) and not settings.airplane  # type: ignore[attr-defined]
    kids = [
        Node(Kind.LABEL, text=w.now.strftime("%H:%M"), rid="com.android.systemui:id/clock", weight=3),
        Node(Kind.SPACER, weight=3),
    ]
    if settings.airplane:  # type: ignore[attr-defined]
        kids.append(
            icon(w.sys_text("airplane"), image="sys:send", rid="com.android.systemui:id/airplane", weight=1)
        )
    kids.append(
        icon(
            w.sys_text("wifi_on" if wifi_on else "wifi_off"),
            image="sys:up" if wifi_on else "sys:close",
            rid="com.android.systemui:id/wifi_combo",
            weight=1,
        )
    )
    kids.append(
        Node(
            Kind.LABEL,
            text=f"{w.sys.battery}%",
            desc=w.sys_text("battery", pct=w.sys.battery),
            rid="com.android.systemui:id/battery",
            weight=2,
        )
    )
    return row(*kids, height=96)


def nav_bar(w: World) -> Node:
    return row(
        icon(w.sys_text("back"), w._back, image="sys:left", rid="com.android.systemui:id/back", height=132),
        icon(
            w.sys_text("home"),
            lambda: w.key(3),
            image="sys:dot",
            rid="com.android.systemui:id/home",
            height=132,
        ),
        icon(
            w.sys_text("recents"),
            lambda: w.key(187),
            image="sys:menu",
            rid="com.android.systemui:id/recent_apps",
            height=132,
        ),
    )


def home(w: World) -> Node:
    from harness.phoneworld.screen import LAUNCHER

    cells = []
    for pkg, app in w.apps.items():
        name = app.name
        cells.append(
            Node(
                Kind.ICON,
                text=name,
                desc=name,
                image=f"app:{app.colour}:{w.text(app.letter)}",
                on_tap=_launcher(w, pkg),
                rid=f"{LAUNCHER}:id/icon",
            )
        )
    return column(
        label(
            w.now.strftime("%A, %d %B") if w.language == "en" else f"{w.now.month}月{w.now.day}日",
            rid=f"{LAUNCHER}:id/date",
            height=160,
        ),
        grid(cells, columns=4, cell_height=300, rid=f"{LAUNCHER}:id/workspace"),
    )


def _launcher(w: World, pkg: str) -> Callable[[], None]:
    return lambda: w.launch(pkg)


def recents(w: World) -> Node:
    cards = []
    for pkg in reversed(w.recents):
        app = w.apps[pkg]
        cards.append(
            row(
                item(
                    app.name,
                    w.text(app.label),
                    on_tap=_launcher(w, pkg),
                    rid=f"recents:{pkg}",
                    weight=5,
                    image=f"app:{app.colour}:{w.text(app.letter)}",
                ),
                icon(w.sys_text("close_app", app=app.name), _closer(w, pkg), image="sys:close", weight=1),
            )
        )
    if not cards:
        cards.append(label(w.sys_text("no_recents"), style=Style.MUTED))
    kids = [title(w.sys_text("recents")), vlist(cards, scroll_key="recents")]
    if w.recents:
        kids.append(
            button(w.sys_text("clear_all"), lambda: _clear_all(w), rid="com.android.launcher3:id/clear_all")
        )
    return column(*kids)


def _closer(w: World, pkg: str) -> Callable[[], None]:
    def close() -> None:
        w.force_stop(pkg)
        w.sys.recents_open = True

    return close


def _clear_all(w: World) -> None:
    for pkg in list(w.recents):
        w.force_stop(pkg)
    w.sys.recents_open = False


def lock_screen(w: World) -> Node:
    return column(
        Node(Kind.SPACER, height=300),
        Node(Kind.TITLE, text=w.now.strftime("%H:%M"), rid="com.android.systemui:id/clock_view", height=200),
        label(
            w.now.strftime("%A, %d %B") if w.language == "en" else f"{w.now.month}月{w.now.day}日",
            rid="com.android.systemui:id/date_view",
        ),
        label(w.sys_text("locked"), style=Style.MUTED, desc=w.sys_text("locked")),
        Node(Kind.SPACER, grow=True),
        label(w.sys_text("unlock_hint"), rid="com.android.systemui:id/keyguard_indication_text", height=200),
    )


def shade(w: World) -> Node:
    settings_app = w.apps["com.android.settings"]
    st = settings_app.state
    tiles = row(
        switch(w.sys_text("wifi"), bool(st.wifi), settings_app.toggle_wifi, rid="qs:wifi"),  # type: ignore[attr-defined]
        switch(
            w.sys_text("bluetooth"), bool(st.bluetooth), settings_app.toggle_bluetooth, rid="qs:bluetooth"
        ),  # type: ignore[attr-defined]
    )
    tiles2 = row(
        switch(w.sys_text("airplane"), bool(st.airplane), settings_app.toggle_airplane, rid="qs:airplane"),  # type: ignore[attr-defined]
        switch(w.sys_text("dark"), bool(st.dark_mode), settings_app.toggle_dark, rid="qs:dark"),  # type: ignore[attr-defined]
    )
    notes = []
    for n in reversed(w.notifications):
        notes.append(
            item(
                n.title,
                n.text,
                on_tap=_opener(w, n),
                rid="android:id/status_bar_latest_event_content",
                image=f"app:{w.apps[n.package].colour}:{w.text(w.apps[n.package].letter)}",
            )
        )
    if not notes:
        notes.append(label(w.sys_text("no_notifications"), style=Style.MUTED))
    kids = [tiles, tiles2, title(w.sys_text("notifications")), vlist(notes, scroll_key="shade")]
    if w.notifications:
        kids.append(
            button(
                w.sys_text("clear_all"),
                lambda: _clear_notifications(w),
                rid="com.android.systemui:id/dismiss_text",
            )
        )
    return Node(Kind.COLUMN, children=kids, blocking=True)


def _opener(w: World, n) -> Callable[[], None]:
    return lambda: w.open_notification(n)


def _clear_notifications(w: World) -> None:
    w.notifications.clear()
    w.sys.shade_open = False


def keyboard_tree(w: World) -> Node:
    shift = w.sys.keyboard_shift
    rows = []
    for i, keys in enumerate(KEY_ROWS):
        kids = [_key(w, ch.upper() if shift and ch.isalpha() else ch, ch) for ch in keys]
        if i == 3:
            kids.insert(
                0,
                Node(
                    Kind.KEY,
                    text="⇧",
                    desc=w.sys_text("shift"),
                    on_tap=lambda: _shift(w),
                    weight=1.5,
                    selected=shift,
                    rid="com.android.inputmethod.latin:id/key_shift",
                ),
            )
            kids.append(
                Node(
                    Kind.KEY,
                    text="←",
                    desc=w.sys_text("delete"),
                    on_tap=w._delete_char,
                    weight=1.5,
                    rid="com.android.inputmethod.latin:id/key_delete",
                )
            )
        rows.append(row(*kids, height=140))
    rows.append(
        row(
            _key(w, ",", ","),
            Node(
                Kind.KEY,
                text=w.sys_text("space"),
                desc=w.sys_text("space"),
                on_tap=lambda: w._type_key(" "),
                weight=5,
                rid="com.android.inputmethod.latin:id/key_space",
            ),
            _key(w, ".", "."),
            Node(
                Kind.KEY,
                text="✓",
                desc=w.sys_text("enter"),
                on_tap=w._submit,
                weight=1.5,
                style=Style.PRIMARY,
                rid="com.android.inputmethod.latin:id/key_enter",
            ),
            height=140,
        )
    )
    return Node(Kind.COLUMN, children=rows, blocking=True)


def _key(w: World, shown: str, ch: str) -> Node:
    return Node(
        Kind.KEY,
        text=shown,
        desc=shown,
        on_tap=lambda: w._type_key(ch),
        rid="com.android.inputmethod.latin:id/key",
    )


def _shift(w: World) -> None:
    w.sys.keyboard_shift = not w.sys.keyboard_shift


def dialog_builder(
    w: World,
    ov: Overlay,
    title_text: str,
    message: str,
    buttons: list[tuple[str, Callable[[], None] | None]],
    rid_prefix: str,
    styles: tuple = (),
) -> Callable[[], Node]:
    def press(handler: Callable[[], None] | None) -> Callable[[], None]:
        def run() -> None:
            w.close_overlay(ov)
            if handler is not None:
                handler()

        return run

    suffixes = ("_allow_button", "_deny_button") if "permission" in rid_prefix else ("1", "2", "3")

    def build() -> Node:
        kids: list[Node] = [title(title_text, rid="android:id/alertTitle")]
        if message:
            kids.append(label(message, rid="android:id/message"))
        for i, (text, handler) in enumerate(buttons):
            style = styles[i] if i < len(styles) else (Style.PRIMARY if i == 0 else Style.NORMAL)
            suffix = suffixes[i] if i < len(suffixes) else str(i + 1)
            kids.append(button(text, press(handler), style=style, rid=f"{rid_prefix}{suffix}"))
        dialog = Node(Kind.DIALOG, children=kids, rid="android:id/parentPanel", blocking=True)
        cancel = (lambda: w.cancel_overlay(ov)) if ov.cancelable else None
        return Node(Kind.SCRIM, children=[dialog], on_tap=cancel, blocking=True)

    return build


def menu_builder(
    w: World, ov: Overlay, items: list[tuple[str, Callable[[], None]]], y: int
) -> Callable[[], Node]:
    from harness.phoneworld.screen import HEIGHT, NAV_H

    def press(handler: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            w.close_overlay(ov)
            handler()

        return run

    def build() -> Node:
        entries = [Node(Kind.ITEM, text=t, on_tap=press(h), rid="android:id/title") for t, h in items]
        menu = Node(Kind.DIALOG, children=entries, rid="android:id/select_dialog_listview", blocking=True)
        height = 120 * len(entries) + 80
        top = min(max(y - 96, 0), HEIGHT - NAV_H - 96 - height - 40)
        return Node(
            Kind.SCRIM,
            children=[
                Node(Kind.SPACER, height=max(0, top)),
                row(Node(Kind.SPACER, weight=1), menu_col(menu), Node(Kind.SPACER, weight=1)),
            ],
            on_tap=lambda: w.close_overlay(ov),
            blocking=True,
            style=Style.MUTED,
        )

    return build


def menu_col(menu: Node) -> Node:
    menu.weight = 4
    return menu


def edit_menu(w: World, field_node: Node, y: int) -> None:
    """Paste / Copy / Select all on a long-pressed text field."""
    bind = field_node.bind
    if bind is None:
        return
    items: list[tuple[str, Callable[[], None]]] = []
    if w.clipboard:
        items.append((w.sys_text("paste"), lambda: _paste(w, bind)))
    if bind.get():
        items.append((w.sys_text("copy"), lambda: _copy(w, bind.get())))
        items.append((w.sys_text("cut"), lambda: _cut(w, bind)))
    if items:
        w.show_menu(items, y=y)


def copy_menu(w: World, text: str, y: int) -> None:
    w.show_menu([(w.sys_text("copy"), lambda: _copy(w, text))], y=y)


def _paste(w: World, bind) -> None:
    bind.set(bind.get() + w.clipboard)


def _copy(w: World, text: str) -> None:
    w.clipboard = text
    w.toast(w.sys_text("copied"))


def _cut(w: World, bind) -> None:
    w.clipboard = bind.get()
    bind.set("")
