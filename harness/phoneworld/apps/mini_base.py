"""What the Chat app's mini-programs share: their bilingual strings (`CAT`), their fixed data (cities, hotel
names, restaurants, departments) and `MiniProgram`, the base that holds the host app.

The host is typed as `MiniHost` (what a mini-program uses of the Chat app), so the mini-programs
(`miniprograms.py`: hotel and food; `mini_hospital.py`) never import the Chat app that imports them.
"""

from __future__ import annotations

from typing import Any, Protocol

from assistant_core.i18n import Catalog, Text

CAT = Catalog(
    "phoneworld.mini",
    {
        "hotel": "Hotel booking",
        "food": "Food delivery",
        "hospital": "Hospital registration",
        "city": "City",
        "any_city": "Any city",
        "checkin": "Check-in date (YYYY-MM-DD)",
        "budget": "Max price per night (¥)",
        "nights": "Nights",
        "search": "Search hotels",
        "sort_price": "Sort by price",
        "sort_rating": "Sort by rating",
        "per_night": "¥{price:.0f} per night · rating {rating}",
        "no_hotels": "No hotels match",
        "book": "Book",
        "guest": "Guest name",
        "pay": "Pay ¥{amount:.2f}",
        "booked": "Booked: {name}",
        "bad_date": "Enter a date like 2026-03-05",
        "bad_budget": "Enter the budget as a number",
        "filters": "Filters: {city}, up to ¥{budget}",
        "no_filter": "No filters applied",
        "menu": "Menu",
        "add": "Add",
        "cart": "Cart: {n} items, ¥{amount:.2f}",
        "checkout": "Checkout",
        "address": "Delivery address",
        "note": "Note for the restaurant",
        "ordered": "Order placed",
        "empty_cart": "The cart is empty",
        "departments": "Departments",
        "doctors": "Doctors",
        "slots": "Available times",
        "fee": "Registration fee ¥{fee:.0f}",
        "patient": "Patient name",
        "confirm": "Confirm registration",
        "registered": "Registered: {doctor}, {slot}",
        "no_slots": "No times left",
        "clear": "Clear cart",
    },
)

CITIES: dict[str, Text] = {
    "beijing": Text("Beijing"),
    "shanghai": Text("Shanghai"),
    "hangzhou": Text("Hangzhou"),
    "chengdu": Text("Chengdu"),
}
HOTEL_NAMES = (
    Text("Lotus Inn"),
    Text("Grand Plaza Hotel"),
    Text("Riverside Hotel"),
    Text("Garden Hostel"),
    Text("Panda Suites"),
    Text("Silk Road Hotel"),
)
RESTAURANTS = (
    (
        Text("Noodle House"),
        (
            (Text("Beef noodles"), 28.0),
            (Text("Dumplings (12)"), 22.0),
            (Text("Cucumber salad"), 12.0),
        ),
    ),
    (
        Text("Congee Corner"),
        (
            (Text("Millet congee"), 9.0),
            (Text("Steamed buns (4)"), 14.0),
            (Text("Tea eggs (2)"), 6.0),
        ),
    ),
    (
        Text("Sichuan Kitchen"),
        (
            (Text("Mapo tofu"), 32.0),
            (Text("Kung pao chicken"), 38.0),
            (Text("Steamed rice"), 3.0),
        ),
    ),
)
DEPARTMENTS = (
    (Text("Cardiology"), (Text("Dr. Wang"), Text("Dr. Li"))),
    (Text("Ophthalmology"), (Text("Dr. Zhao"), Text("Dr. Chen"))),
    (Text("Orthopedics"), (Text("Dr. Sun"), Text("Dr. Zhou"))),
    (Text("General medicine"), (Text("Dr. Liu"), Text("Dr. Huang"))),
)
TITLES = (Text("Chief physician"), Text("Attending physician"))


class MiniHost(Protocol):
    """What a mini-program uses of its host app (harness.phoneworld.apps.chat.ChatApp)."""

    world: Any
    package: str

    @property
    def lang(self) -> str: ...

    @property
    def s(self) -> Any: ...  # the Chat app's state, holding each mini-program's state

    def go(self, *args: Any, **kwargs: Any) -> Any: ...

    def replace(self, *args: Any, **kwargs: Any) -> Any: ...

    def rid(self, name: str) -> str: ...


class MiniProgram:
    """What the three mini-programs share: their host app (Chat) and their bilingual strings."""

    def __init__(self, app: MiniHost):
        self.app = app

    def t(self, key: str, **kw: object) -> str:
        return CAT.get(key, self.app.lang, **kw)


_Mini = MiniProgram  # the older private name
