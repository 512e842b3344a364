"""The mock apps, one module each. `APP_CLASSES` lists them in home-screen order.

| package                   | app (en / zh)        | module      |
|---------------------------|----------------------|-------------|
| com.android.settings      | Settings / 设置       | settings    |
| com.android.dialer        | Phone / 电话          | phone       |
| com.android.messaging     | Messages / 信息       | messages    |
| com.phoneworld.chat       | WeChat / 微信         | chat (+ miniprograms) |
| com.android.calendar      | Calendar / 日历       | calendar    |
| com.android.email         | Mail / 邮件           | mail        |
| com.android.gallery3d     | Gallery / 相册        | gallery     |
| com.phoneworld.notes      | Notes / 备忘录        | notes       |
| com.android.deskclock     | Clock / 时钟          | clock       |
| com.android.browser       | Browser / 浏览器      | browser     |
| com.phoneworld.shop       | Shop / 商城           | shop        |
| com.phoneworld.wallet     | Wallet / 钱包         | wallet      |
| com.android.documentsui   | Files / 文件          | files       |
| com.phoneworld.todo       | To-do / 待办          | todo        |
| com.phoneworld.expenses   | Expenses / 记账       | expenses    |
| com.phoneworld.recipes    | Recipes / 菜谱        | recipes     |
"""

from __future__ import annotations

from harness.phoneworld.apps.browser import BrowserApp
from harness.phoneworld.apps.calendar import CalendarApp
from harness.phoneworld.apps.chat import ChatApp
from harness.phoneworld.apps.clock import ClockApp
from harness.phoneworld.apps.expenses import ExpensesApp
from harness.phoneworld.apps.files import FilesApp
from harness.phoneworld.apps.gallery import GalleryApp
from harness.phoneworld.apps.mail import MailApp
from harness.phoneworld.apps.messages import MessagesApp
from harness.phoneworld.apps.notes import NotesApp
from harness.phoneworld.apps.phone import PhoneApp
from harness.phoneworld.apps.recipes import RecipesApp
from harness.phoneworld.apps.settings import SettingsApp
from harness.phoneworld.apps.shop import ShopApp
from harness.phoneworld.apps.todo import TodoApp
from harness.phoneworld.apps.wallet import WalletApp

APP_CLASSES: tuple[type, ...] = (
    SettingsApp,
    PhoneApp,
    MessagesApp,
    ChatApp,
    CalendarApp,
    MailApp,
    GalleryApp,
    NotesApp,
    ClockApp,
    BrowserApp,
    ShopApp,
    WalletApp,
    FilesApp,
    TodoApp,
    ExpensesApp,
    RecipesApp,
)
