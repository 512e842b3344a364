"""App names people say (English and Chinese) -> Android packages, for open_app / close_app.

`resolve_app(name, installed)` tries, in order: an installed package given verbatim; an installed app's
label (the phone's own, in its language); this map (common apps in China and elsewhere, and
PhoneWorld-lite's mock apps); then a unique partial match on labels. Matching ignores case, spaces and
punctuation. Returns None when nothing fits (the caller says so in words).
"""

from __future__ import annotations

import re

# package -> names people use for it (English first, then Chinese); the first English name is its label.
KNOWN_APPS: dict[str, tuple[str, ...]] = {
    "com.android.settings": ("Settings", "设置", "系统设置"),
    "com.android.browser": ("Browser", "浏览器"),
    "com.android.chrome": ("Chrome", "Google Chrome", "谷歌浏览器"),
    "com.android.calendar": ("Calendar", "日历"),
    "com.google.android.calendar": ("Google Calendar", "谷歌日历"),
    "com.android.deskclock": ("Clock", "Alarm", "时钟", "闹钟"),
    "com.google.android.deskclock": ("Google Clock",),
    "com.android.gallery3d": ("Gallery", "Photos", "相册", "图库", "照片"),
    "com.google.android.apps.photos": ("Google Photos", "谷歌相册"),
    "com.android.email": ("Mail", "Email", "邮件", "电子邮件"),
    "com.google.android.gm": ("Gmail",),
    "com.android.messaging": ("Messages", "SMS", "Text messages", "信息", "短信"),
    "com.google.android.apps.messaging": ("Google Messages",),
    "com.phoneworld.notes": ("Notes", "Memo", "备忘录", "笔记"),
    "com.android.dialer": ("Phone", "Dialer", "Call", "电话", "拨号"),
    "com.google.android.dialer": ("Google Phone",),
    "com.android.contacts": ("Contacts", "People", "联系人", "通讯录"),
    "com.phoneworld.shop": ("Shop", "Store", "商城", "商店"),
    "com.phoneworld.chat": ("WeChat", "Chat", "微信", "聊天"),
    "com.android.documentsui": ("Files", "File manager", "文件", "文件管理"),
    "com.phoneworld.wallet": ("Wallet", "钱包"),
    "com.android.camera2": ("Camera", "相机", "照相机"),
    "com.android.vending": ("Play Store", "Google Play", "应用商店"),
    "com.google.android.youtube": ("YouTube", "油管"),
    "com.google.android.apps.maps": ("Google Maps", "Maps", "谷歌地图"),
    "com.whatsapp": ("WhatsApp",),
    "com.tencent.mm": ("WeChat", "Weixin", "微信"),
    "com.tencent.mobileqq": ("QQ",),
    "com.eg.android.AlipayGphone": ("Alipay", "支付宝"),
    "com.taobao.taobao": ("Taobao", "淘宝"),
    "com.jingdong.app.mall": ("JD", "JD.com", "京东"),
    "com.xunmeng.pinduoduo": ("Pinduoduo", "拼多多"),
    "com.sankuai.meituan": ("Meituan", "美团"),
    "me.ele": ("Ele.me", "饿了么"),
    "com.dianping.v1": ("Dianping", "大众点评"),
    "com.ss.android.ugc.aweme": ("Douyin", "TikTok China", "抖音"),
    "com.smile.gifmaker": ("Kuaishou", "快手"),
    "com.sina.weibo": ("Weibo", "微博"),
    "com.xingin.xhs": ("Xiaohongshu", "RED", "小红书"),
    "tv.danmaku.bili": ("Bilibili", "哔哩哔哩", "B站"),
    "com.autonavi.minimap": ("Amap", "Gaode Maps", "高德地图", "高德"),
    "com.baidu.BaiduMap": ("Baidu Maps", "百度地图"),
    "com.baidu.searchbox": ("Baidu", "百度"),
    "com.sdu.didi.psnger": ("DiDi", "滴滴出行", "滴滴"),
    "ctrip.android.view": ("Trip.com", "Ctrip", "携程", "携程旅行"),
    "com.MobileTicket": ("12306", "Railway 12306", "铁路12306"),
    "com.netease.cloudmusic": ("NetEase Cloud Music", "网易云音乐"),
    "com.tencent.qqmusic": ("QQ Music", "QQ音乐"),
    "com.zhihu.android": ("Zhihu", "知乎"),
    "com.tencent.wework": ("WeCom", "企业微信"),
    "com.alibaba.android.rimet": ("DingTalk", "钉钉"),
}

_PUNCT = re.compile(r"[\s\-_.·'’\"()（）]+")


def normalize_name(name: str) -> str:
    return _PUNCT.sub("", name.strip().lower())


def label_for(package: str) -> str | None:
    names = KNOWN_APPS.get(package)
    return names[0] if names else None


def resolve_app(name: str, installed: dict[str, str]) -> str | None:
    """The package to open for `name`, given `installed` (package -> label on the phone)."""
    raw = name.strip()
    if not raw:
        return None
    if raw in installed:
        return raw
    key = normalize_name(raw)
    for pkg, label in installed.items():
        if normalize_name(label) == key:
            return pkg
    known = [pkg for pkg, names in KNOWN_APPS.items() if key in (normalize_name(n) for n in names)]
    for pkg in known:
        if pkg in installed or not installed:
            return pkg
    partial = [
        pkg
        for pkg, label in installed.items()
        if normalize_name(label) and (key in normalize_name(label) or normalize_name(label) in key)
    ]
    if len(partial) == 1:
        return partial[0]
    if known:
        return known[0] if not installed else None
    return None
