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
        "hotel": ("Hotel booking", "酒店预订"),
        "food": ("Food delivery", "外卖点餐"),
        "hospital": ("Hospital registration", "医院挂号"),
        "city": ("City", "城市"),
        "any_city": ("Any city", "不限城市"),
        "checkin": ("Check-in date (YYYY-MM-DD)", "入住日期（年-月-日）"),
        "budget": ("Max price per night (¥)", "每晚最高价格（元）"),
        "nights": ("Nights", "入住晚数"),
        "search": ("Search hotels", "搜索酒店"),
        "sort_price": ("Sort by price", "按价格排序"),
        "sort_rating": ("Sort by rating", "按评分排序"),
        "per_night": ("¥{price:.0f} per night · rating {rating}", "每晚 ¥{price:.0f} · 评分 {rating}"),
        "no_hotels": ("No hotels match", "没有符合条件的酒店"),
        "book": ("Book", "预订"),
        "guest": ("Guest name", "入住人姓名"),
        "pay": ("Pay ¥{amount:.2f}", "支付 ¥{amount:.2f}"),
        "booked": ("Booked: {name}", "已预订：{name}"),
        "bad_date": ("Enter a date like 2026-03-05", "请输入日期，例如 2026-03-05"),
        "bad_budget": ("Enter the budget as a number", "请输入数字预算"),
        "filters": ("Filters: {city}, up to ¥{budget}", "筛选：{city}，最高 ¥{budget}"),
        "no_filter": ("No filters applied", "未应用筛选"),
        "menu": ("Menu", "菜单"),
        "add": ("Add", "加入"),
        "cart": ("Cart: {n} items, ¥{amount:.2f}", "购物车：{n} 件，¥{amount:.2f}"),
        "checkout": ("Checkout", "去结算"),
        "address": ("Delivery address", "送餐地址"),
        "note": ("Note for the restaurant", "给商家的备注"),
        "ordered": ("Order placed", "下单成功"),
        "empty_cart": ("The cart is empty", "购物车是空的"),
        "departments": ("Departments", "科室"),
        "doctors": ("Doctors", "医生"),
        "slots": ("Available times", "可预约时间"),
        "fee": ("Registration fee ¥{fee:.0f}", "挂号费 ¥{fee:.0f}"),
        "patient": ("Patient name", "就诊人姓名"),
        "confirm": ("Confirm registration", "确认挂号"),
        "registered": ("Registered: {doctor}, {slot}", "挂号成功：{doctor}，{slot}"),
        "no_slots": ("No times left", "没有可预约的时间"),
        "clear": ("Clear cart", "清空购物车"),
    },
)

CITIES: dict[str, Text] = {
    "beijing": Text("Beijing", "北京"),
    "shanghai": Text("Shanghai", "上海"),
    "hangzhou": Text("Hangzhou", "杭州"),
    "chengdu": Text("Chengdu", "成都"),
}
HOTEL_NAMES = (
    Text("Lotus Inn", "莲花客栈"),
    Text("Grand Plaza Hotel", "君悦广场酒店"),
    Text("Riverside Hotel", "江畔酒店"),
    Text("Garden Hostel", "花园青年旅舍"),
    Text("Panda Suites", "熊猫套房酒店"),
    Text("Silk Road Hotel", "丝路酒店"),
)
RESTAURANTS = (
    (
        Text("Noodle House", "面馆"),
        (
            (Text("Beef noodles", "牛肉面"), 28.0),
            (Text("Dumplings (12)", "饺子（12 个）"), 22.0),
            (Text("Cucumber salad", "拍黄瓜"), 12.0),
        ),
    ),
    (
        Text("Congee Corner", "粥铺"),
        (
            (Text("Millet congee", "小米粥"), 9.0),
            (Text("Steamed buns (4)", "包子（4 个）"), 14.0),
            (Text("Tea eggs (2)", "茶叶蛋（2 个）"), 6.0),
        ),
    ),
    (
        Text("Sichuan Kitchen", "川菜馆"),
        (
            (Text("Mapo tofu", "麻婆豆腐"), 32.0),
            (Text("Kung pao chicken", "宫保鸡丁"), 38.0),
            (Text("Steamed rice", "米饭"), 3.0),
        ),
    ),
)
DEPARTMENTS = (
    (Text("Cardiology", "心内科"), (Text("Dr. Wang", "王医生"), Text("Dr. Li", "李医生"))),
    (Text("Ophthalmology", "眼科"), (Text("Dr. Zhao", "赵医生"), Text("Dr. Chen", "陈医生"))),
    (Text("Orthopedics", "骨科"), (Text("Dr. Sun", "孙医生"), Text("Dr. Zhou", "周医生"))),
    (Text("General medicine", "全科"), (Text("Dr. Liu", "刘医生"), Text("Dr. Huang", "黄医生"))),
)
TITLES = (Text("Chief physician", "主任医师"), Text("Attending physician", "主治医师"))


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
