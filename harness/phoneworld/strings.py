"""The system UI's bilingual strings (status bar, home, keyboard, dialogs, lock screen, shade)."""

from __future__ import annotations

from assistant_core.i18n import Catalog, Text

SYSTEM = Catalog(
    "phoneworld.system",
    {
        "wifi_on": ("Wi-Fi on", "WLAN 已开启"),
        "wifi_off": ("Wi-Fi off", "WLAN 已关闭"),
        "battery": ("Battery {pct} percent", "电池电量百分之{pct}"),
        "airplane": ("Airplane mode", "飞行模式"),
        "bluetooth": ("Bluetooth", "蓝牙"),
        "wifi": ("Wi-Fi", "WLAN"),
        "dark": ("Dark theme", "深色主题"),
        "back": ("Back", "返回"),
        "home": ("Home", "主屏幕"),
        "recents": ("Overview", "最近使用的应用"),
        "no_recents": ("No recent items", "近期没有任何内容"),
        "clear_all": ("Clear all", "全部清除"),
        "close_app": ("Close {app}", "关闭{app}"),
        "unlock_hint": ("Swipe up to unlock", "向上滑动解锁"),
        "locked": ("Locked", "已锁定"),
        "notifications": ("Notifications", "通知"),
        "no_notifications": ("No notifications", "没有通知"),
        "paste": ("Paste", "粘贴"),
        "copy": ("Copy", "复制"),
        "select_all": ("Select all", "全选"),
        "cut": ("Cut", "剪切"),
        "copied": ("Copied", "已复制"),
        "allow": ("Allow", "允许"),
        "deny": ("Don't allow", "不允许"),
        "perm_photos": (
            "Allow {app} to access photos and videos on this device?",
            "要允许“{app}”访问此设备上的照片和视频吗？",
        ),
        "perm_location": (
            "Allow {app} to access this device's location?",
            "要允许“{app}”获取此设备的位置信息吗？",
        ),
        "perm_contacts": ("Allow {app} to access your contacts?", "要允许“{app}”访问您的通讯录吗？"),
        "perm_camera": (
            "Allow {app} to take pictures and record video?",
            "要允许“{app}”拍摄照片和录制视频吗？",
        ),
        "perm_microphone": ("Allow {app} to record audio?", "要允许“{app}”录制音频吗？"),
        "perm_notifications": ("Allow {app} to send you notifications?", "要允许“{app}”向您发送通知吗？"),
        "stopped": ("{app} has stopped", "“{app}”已停止运行"),
        "close": ("Close app", "关闭应用"),
        "open_again": ("Open app again", "重新打开应用"),
        "space": ("space", "空格"),
        "delete": ("Delete", "删除"),
        "enter": ("Enter", "回车"),
        "shift": ("Shift", "大写"),
        "search_apps": ("Search apps", "搜索应用"),
        "out_of_bounds": ("That point ({x}, {y}) is outside the screen.", "位置 ({x}, {y}) 在屏幕之外。"),
        "unknown_app": ("There is no app called {app} on this phone.", "这部手机上没有名为{app}的应用。"),
        "ok": ("OK", "确定"),
        "cancel": ("Cancel", "取消"),
    },
)


def system_text(key: str) -> Text:
    return SYSTEM[key]
