"""The contract every mock app fulfils.

An app owns a typed state dataclass (`self.state`, rebuilt from the seed by `reset(rng)`), and
describes each of its screens declaratively: `build(route) -> Node`. The world keeps the app's back stack
of `Route`s, lays the tree out, draws it and dispatches gestures to the handlers the tree carries.
Handlers change `self.state` and navigate with `self.go(...)` / `self.back()`; anything sensitive that
really happens is recorded with `self.world.record(...)`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.records import Route
from harness.phoneworld.ui import Node, toolbar

if TYPE_CHECKING:
    from harness.phoneworld.screen import WorldAPI as World


class App:
    """Base class of the mock apps. Subclasses set the class attributes and implement reset/build."""

    package: ClassVar[str] = ""
    label: ClassVar[Text] = Text("")
    colour: ClassVar[str] = "607d8b"  # icon colour, hex RGB
    letter: ClassVar[Text] = Text("?")
    catalog: ClassVar[Catalog | None] = None
    start: ClassVar[Route] = Route("main")

    def __init__(self, world: World):
        self.world = world
        self.state: object = None

    # --- what subclasses implement -------------------------------------------------------------------

    def reset(self, rng: random.Random) -> None:
        """Rebuild `self.state` from `rng` (seeded by the world): same seed, same state."""
        raise NotImplementedError

    def build(self, route: Route) -> Node:
        """The screen for `route`, built from the current state."""
        raise NotImplementedError

    def activity(self, route: Route) -> str:
        name = "".join(p.capitalize() for p in route.screen.split("_"))
        return f"{self.package}.{name}Activity"

    def is_secure(self, route: Route) -> bool:
        """True where the screen sets FLAG_SECURE (screenshots come out black)."""
        return False

    def on_launch(self) -> None:
        """Called when the app comes to the foreground from a cold start (a permission prompt, say)."""

    def on_back(self, route: Route) -> bool:
        """Handle the Back key on `route` (return True), or let the world pop the back stack."""
        return False

    def on_route(self, route: Route) -> None:
        """Called when `route` is pushed onto the app's back stack (by the app, a notification, a share)."""

    def receive_share(self, payload) -> None:
        """Called before the app opens its "share" screen with `payload` (a world.SharePayload)."""

    def on_stop(self) -> None:
        """Called when the app is force-stopped or crashes: drop unsaved drafts if it has any."""

    # --- helpers for subclasses ----------------------------------------------------------------------

    @property
    def lang(self) -> str:
        return self.world.language

    def t(self, key: str, **kwargs: object) -> str:
        assert self.catalog is not None
        return self.catalog.get(key, self.world.language, **kwargs)

    def tx(self, text: Text, **kwargs: object) -> str:
        return text.get(self.world.language, **kwargs)

    @property
    def name(self) -> str:
        return self.label.get(self.world.language)

    @property
    def route(self) -> Route:
        return self.world.route_of(self.package)

    def go(self, screen: str, arg: str = "") -> None:
        self.world.push(self.package, Route(screen, str(arg)))

    def replace(self, screen: str, arg: str = "") -> None:
        self.world.replace_top(self.package, Route(screen, str(arg)))

    def back(self) -> None:
        self.world.pop(self.package)

    def home_to(self, screen: str = "", arg: str = "") -> None:
        """Clear the back stack to the start screen (and optionally push one screen on it)."""
        self.world.reset_stack(self.package)
        if screen:
            self.go(screen, arg)

    def bar(self, text: str, *, up: bool = True, actions: tuple[Node, ...] = ()) -> Node:
        return toolbar(text, self.up if up else None, actions)

    def up(self) -> None:
        """The toolbar's Navigate-up arrow: the same as the Back key inside the app."""
        if not self.on_back(self.route):
            self.back()

    def rid(self, name: str) -> str:
        return f"{self.package}:id/{name}"
