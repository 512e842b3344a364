"""Recipes (com.phoneworld.recipes): a small cookbook.

State (`w.recipes`): `RecipesState` — recipes: list[Recipe] (id, title: Text, ingredients: Text,
minutes, servings, favourite). Titles and ingredients carry both languages; the UI shows the phone's.

Screens: main (the list; favourites marked ★), recipe <id> (ingredients, time, servings with − and +,
a Favourite switch, Delete). Sensitive events: ITEM_DELETED when a recipe is deleted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from assistant_core.i18n import Catalog, Text
from harness.phoneworld.apps.base import App
from harness.phoneworld.records import Route, SensitiveKind
from harness.phoneworld.ui import Node, Style, button, column, item, label, row, switch, vlist

CAT = Catalog(
    "phoneworld.recipes",
    {
        "title": "Recipes",
        "ingredients": "Ingredients: {list}",
        "minutes": "Ready in {n} minutes",
        "servings": "Servings: {n}",
        "fewer": "Fewer servings",
        "more": "More servings",
        "favourite": "Favourite",
        "delete": "Delete recipe",
        "empty": "No recipes",
    },
)

SEED = (
    (Text("Tomato egg stir-fry"), Text("tomatoes, eggs, spring onion, salt"), 15),
    (Text("Congee with greens"), Text("rice, bok choy, ginger, salt"), 40),
    (Text("Steamed fish"), Text("sea bass, ginger, soy sauce, spring onion"), 25),
    (Text("Pork dumplings"), Text("flour, pork, cabbage, ginger"), 60),
    (Text("Mapo tofu"), Text("tofu, minced pork, chilli bean paste, pepper"), 20),
    (Text("Cucumber salad"), Text("cucumber, garlic, vinegar, sesame oil"), 10),
)


@dataclass
class Recipe:
    id: str
    title: Text
    ingredients: Text
    minutes: int
    servings: int = 2
    favourite: bool = False


@dataclass
class RecipesState:
    recipes: list[Recipe] = field(default_factory=list)


class RecipesApp(App):
    package = "com.phoneworld.recipes"
    label = Text("Recipes")
    colour = "e37400"
    letter = Text("R")
    catalog = CAT
    short = "recipes"

    def reset(self, rng: random.Random) -> None:
        picks = rng.sample(range(len(SEED)), 5)
        self.state = RecipesState(recipes=[
            Recipe(f"r{i}", *SEED[i], servings=rng.choice((2, 2, 3, 4))) for i in sorted(picks)
        ])

    @property
    def s(self) -> RecipesState:
        return self.state  # type: ignore[return-value]

    def recipe(self, rid_: str) -> Recipe | None:
        return next((r for r in self.s.recipes if r.id == rid_), None)

    def named(self, title: str) -> Recipe | None:
        return next((r for r in self.s.recipes if title in (r.title.en, r.title.zh)), None)

    def _servings(self, rid_: str, delta: int):
        def go() -> None:
            r = self.recipe(rid_)
            if r is not None:
                r.servings = max(1, min(12, r.servings + delta))

        return go

    def _favourite(self, rid_: str):
        def go() -> None:
            r = self.recipe(rid_)
            if r is not None:
                r.favourite = not r.favourite

        return go

    def delete(self, rid_: str) -> None:
        r = self.recipe(rid_)
        if r is not None:
            self.s.recipes.remove(r)
            self.world.record(SensitiveKind.ITEM_DELETED, self.package, target=r.title.en, item="recipe")
        self.home_to()

    def build(self, route: Route) -> Node:
        if route.screen == "recipe" and self.recipe(route.arg) is not None:
            return self._detail(self.recipe(route.arg))  # type: ignore[arg-type]
        return self._main()

    def _main(self) -> Node:
        rows = [item(("★ " if r.favourite else "") + self.tx(r.title), self.t("minutes", n=r.minutes),
                     self._open(r.id), rid=self.rid("recipe_item")) for r in self.s.recipes]
        if not rows:
            rows.append(label(self.t("empty"), style=Style.MUTED))
        return column(self.bar(self.t("title"), up=False), vlist(rows, scroll_key="recipes", rid=self.rid("recipe_list")))

    def _open(self, rid_: str):
        return lambda: self.go("recipe", rid_)

    def _detail(self, r: Recipe) -> Node:
        return column(
            self.bar(self.tx(r.title)),
            label(self.t("ingredients", list=self.tx(r.ingredients)), rid=self.rid("ingredients"), copyable=True),
            label(self.t("minutes", n=r.minutes), rid=self.rid("minutes")),
            row(button("−", self._servings(r.id, -1), rid=self.rid("fewer"), desc=self.t("fewer")),
                label(self.t("servings", n=r.servings), rid=self.rid("servings")),
                button("+", self._servings(r.id, 1), rid=self.rid("more"), desc=self.t("more"))),
            switch(self.t("favourite"), r.favourite, self._favourite(r.id), rid=self.rid("favourite")),
            button(self.t("delete"), lambda: self.delete(r.id), style=Style.DANGER, rid=self.rid("delete")),
        )
