"""Every user-facing string of the desktop window, in English and Chinese (catalog "app").

Widgets never hold literal text: each has a `retranslate(lang)` that reads from here, so switching the
language at run time re-labels every control, its accessible name and its description at once.
"""

from __future__ import annotations

from assistant_core.i18n import Catalog
from phonebuddy.assistant import MSG as TURN

APP = Catalog(
    "app",
    {
        # window and areas
        "window_title": ("PhoneBuddy", "手机助手 PhoneBuddy"),
        "window_desc": (
            "PhoneBuddy desktop assistant: speak or type a request and it operates your phone.",
            "手机助手：说出或输入请求，它会替您操作手机。",
        ),
        "sim_phone": ("Simulated phone (PhoneWorld-lite)", "模拟手机（PhoneWorld-lite）"),
        "sim_phone_offer": (
            "No phone is attached. You can try PhoneBuddy on a simulated phone.",
            "没有连接手机。您可以先在模拟手机上试用手机助手。",
        ),
        "use_sim": ("Use the simulated phone", "使用模拟手机"),
        "use_sim_desc": (
            "Opens PhoneWorld-lite, a simulated phone, so you can try every feature without a real phone.",
            "打开模拟手机 PhoneWorld-lite，无需真实手机即可试用全部功能。",
        ),
        "mirror": ("Phone screen", "手机屏幕"),
        "mirror_desc": (
            "Live picture of the phone. Click to tap the phone there. With 'send all keys to the phone' on, keys go to the phone.",
            "手机的实时画面。点击即可在手机的相应位置点按。开启“所有按键发送到手机”后，按键会发送到手机。",
        ),
        "mirror_empty": ("No phone picture yet", "暂无手机画面"),
        "send_keys": ("Send all keys to the phone (F9)", "所有按键发送到手机（F9）"),
        "send_keys_desc": (
            "When on, every key except F9 goes to the phone, so you can drive TalkBack directly. F9 turns it off.",
            "开启后，除 F9 外的所有按键都发送到手机，可直接操作 TalkBack。按 F9 关闭。",
        ),
        "send_keys_on": (
            "Keys now go to the phone. Press F9 to take the keyboard back.",
            "按键现在发送到手机。按 F9 收回键盘。",
        ),
        "send_keys_off": ("Keys stay with PhoneBuddy.", "按键留在手机助手。"),
        "conversation": ("Conversation", "对话记录"),
        "conversation_desc": (
            "Every request, step, question and answer, newest last. Use the arrow keys to review.",
            "所有请求、步骤、提问和回答，最新的在最后。用方向键查看。",
        ),
        "talk": ("Hold to talk (Space) · F2", "按住说话（空格）· F2"),
        "talk_listening": ("Listening… release to send", "正在听…松开发送"),
        "talk_desc": (
            "Push to talk: hold this button with Space or the mouse while you speak, or press F2 to start and stop.",
            "按住说话：说话时用空格键或鼠标按住此按钮，或按 F2 开始和结束。",
        ),
        "request": ("Typed request", "输入请求"),
        "request_desc": ("Type what you want done on the phone and press Enter.", "输入想在手机上完成的事情，然后按回车。"),
        "request_placeholder": ("For example: turn on Wi-Fi", "例如：打开无线网络"),
        "send": ("Send", "发送"),
        "send_desc": ("Sends the typed request to the assistant.", "把输入的请求发送给助手。"),
        "stop": ("Stop (Esc)", "停止（Esc）"),
        "stop_desc": ("Stops the assistant at once and stops speech.", "立即停止助手并停止朗读。"),
        "settings": ("Caregiver settings (F12)", "照护者设置（F12）"),
        "settings_desc": ("Opens the caregiver settings. A PIN is needed.", "打开照护者设置，需要输入 PIN 码。"),
        "help": ("Keyboard shortcuts (F1)", "快捷键（F1）"),
        "help_desc": ("Lists every keyboard shortcut and reads them aloud.", "列出并朗读所有快捷键。"),
        "status": ("Status", "状态"),
        "status_desc": ("Phone, model and what the assistant is doing now.", "手机、模型以及助手当前的状态。"),
        "status_line": ("Phone: {phone} · Agent: {agent} · {state}", "手机：{phone} · 助手：{agent} · {state}"),
        "announcements": ("Announcements", "播报"),
        "no_phone": ("none", "无"),
        # states
        "state_idle": ("Ready", "就绪"),
        "state_listening": ("Listening", "正在听"),
        "state_transcribing": ("Understanding your words", "正在识别语音"),
        "state_working": ("Working", "正在执行"),
        "state_waiting": ("Waiting for your answer", "等待您的回答"),
        # agent labels
        "agent_demo": ("Scripted demonstration (not a model)", "脚本演示（不是模型）"),
        "agent_local_4bit": ("Local model, 4-bit", "本地模型（4 位）"),
        "agent_local_cpu": ("Local model, CPU", "本地模型（CPU）"),
        "agent_server": ("Server {address}", "服务器 {address}"),
        "agent_none": ("No agent available", "没有可用的助手"),
        "demo_note": (
            "No model is downloaded yet, so this is a scripted demonstration: a script that knows the simulated phone plays the assistant.",
            "尚未下载模型，所以这是脚本演示：由熟悉模拟手机的脚本扮演助手。",
        ),
        # conversation entries
        "step": ("Step {n}: {what}", "第 {n} 步：{what}"),
        "assistant": ("Assistant: {text}", "助手：{text}"),
        "question": ("Question: {text}", "提问：{text}"),
        "blocked": ("Not done: {text}", "未执行：{text}"),
        "done": ("Done: {text}", "完成：{text}"),
        "failed": ("Stopped: {text}", "已停止：{text}"),
        "error": ("Problem: {text}", "出现问题：{text}"),
        "startup_no_phone": (
            "PhoneBuddy is ready, but no phone is attached. Press F5 to try the simulated phone, or connect a phone "
            "by USB with USB debugging on.",
            "手机助手已就绪，但没有连接手机。按 F5 可以先用模拟手机试用，或者用 USB 连接一部打开了 USB 调试的手机。",
        ),
        "startup_phone": ("PhoneBuddy is ready. Phone: {phone}.", "手机助手已就绪。手机：{phone}。"),
        "sc_sim": ("F5: use the simulated phone", "F5：使用模拟手机"),
        "sc_channel": ("F11: PhoneBuddy's own voice, your screen reader, or both", "F11：手机助手自己的声音、读屏软件或两者"),
        "channel_title": ("Which voice?", "用哪个声音？"),
        "channel_question": (
            "{reader} is running. Should PhoneBuddy speak with its own voice, or leave speech to your screen "
            "reader? Press V for PhoneBuddy's voice, S for your screen reader. F11 changes it later.",
            "检测到{reader}正在运行。手机助手要用自己的声音说话，还是交给您的读屏软件朗读？"
            "按 V 用手机助手的声音，按 S 用读屏软件。以后可以按 F11 更改。",
        ),
        "channel_own": ("PhoneBuddy's voice (V)", "手机助手的声音（V）"),
        "channel_own_desc": ("PhoneBuddy speaks; your screen reader is not sent its messages.",
                             "由手机助手朗读，不再把消息发给读屏软件。"),
        "channel_reader": ("My screen reader (S)", "我的读屏软件（S）"),
        "channel_reader_desc": ("Your screen reader reads PhoneBuddy's messages; PhoneBuddy stays silent.",
                                "由读屏软件朗读手机助手的消息，手机助手自己不出声。"),
        "channel_now_own_voice": ("Now PhoneBuddy's own voice speaks.", "现在由手机助手自己的声音朗读。"),
        "channel_now_screen_reader": ("Now your screen reader speaks; PhoneBuddy stays silent.",
                                      "现在由读屏软件朗读，手机助手不出声。"),
        "channel_now_both": ("Now PhoneBuddy's voice and the screen reader both get every message.",
                             "现在手机助手的声音和读屏软件都会收到每条消息。"),
        "no_mic": (
            "Voice input is not available here. Please type your request.",
            "这里无法使用语音输入，请输入您的请求。",
        ),
        "tapped": ("Tapped the phone at {x}, {y}.", "已点按手机 {x}，{y}。"),
        "handover_key": ("Or press F10.", "也可以按 F10。"),
        "done_word": ("done", "好了"),
        "nothing_handed_over": ("There is no step waiting for you.", "现在没有等您完成的步骤。"),
        "pin_pad": ("PIN for the simulated phone's protected screen", "模拟手机受保护页面的密码"),
        "pin_pad_desc": ("Type the digits and press Enter: they are pressed on the simulated phone's own keypad, "
                         "never read aloud or kept. Then say or type done, or press F10.",
                         "输入数字后按回车：这些数字会在模拟手机自己的键盘上按下，不会被读出或保存。然后说或输入“好了”，或按 F10。"),
        "pin_pad_shown": ("The simulated phone is showing a protected PIN screen. The PIN box is focused: type the "
                          "PIN and press Enter, then press F10.",
                          "模拟手机正在显示受保护的密码页面。焦点在密码框：输入密码后按回车，然后按 F10。"),
        "pin_pressed": ("Pressed {n} digits on the simulated phone.", "已在模拟手机上按下 {n} 位数字。"),
        "pin_not_pressed": ("The simulated phone shows no keypad for these digits. Type digits only.",
                            "模拟手机上没有可以输入这些数字的键盘。请只输入数字。"),
        "mirror_busy": (
            "The assistant is using the phone. Stop it first to tap yourself.",
            "助手正在使用手机。请先停止它再自己点按。",
        ),
        "language_now": ("Language: English", "语言：中文"),
        "contrast_on": ("High contrast on.", "高对比度已开启。"),
        "contrast_off": ("High contrast off.", "高对比度已关闭。"),
        "rate_now": ("Speech rate {rate} percent.", "语速 {rate}%。"),
        "nothing_to_repeat": ("Nothing to repeat yet.", "还没有可以重复的内容。"),
        # shortcuts (F1)
        "shortcuts_title": ("Keyboard shortcuts", "快捷键"),
        "shortcuts_intro": (
            "PhoneBuddy avoids the Insert and Caps Lock keys of screen readers and the Alt keys of TalkBack.",
            "手机助手不占用读屏软件的 Insert 和 Caps Lock 键，也不占用 TalkBack 的 Alt 键。",
        ),
        "sc_help": ("F1: list these shortcuts", "F1：列出快捷键"),
        "sc_talk": ("F2: start or stop listening; or hold Space on the talk button", "F2：开始或停止聆听；或在说话按钮上按住空格"),
        "sc_repeat": ("F3: repeat what was last said", "F3：重复上一句话"),
        "sc_stop": ("Escape or F4: stop the assistant and the speech", "Esc 或 F4：停止助手和朗读"),
        "sc_request": ("Ctrl+L: go to the request box", "Ctrl+L：转到输入框"),
        "sc_areas": ("F6: move between the areas of the window", "F6：在窗口各区域之间切换"),
        "sc_contrast": ("F7: high contrast on or off", "F7：开启或关闭高对比度"),
        "sc_language": ("F8: switch between English and Chinese", "F8：切换中文和英文"),
        "sc_keys": ("F9: send all keys to the phone, or take them back", "F9：所有按键发送到手机，或收回"),
        "sc_rate": ("Ctrl+Up and Ctrl+Down: speak faster or slower", "Ctrl+上 和 Ctrl+下：加快或放慢语速"),
        "sc_done": ("F10: tell me you finished a step I handed to you", "F10：告诉我您已完成我交给您的那一步"),
        "sc_settings": ("F12: caregiver settings", "F12：照护者设置"),
        "sc_quit": ("Ctrl+Q: quit", "Ctrl+Q：退出"),
        "sc_any": ("Any key stops the speech.", "按任意键停止朗读。"),
        "close": ("Close", "关闭"),
        "close_desc": ("Closes this window.", "关闭此窗口。"),
        # confirmation dialog
        "confirm_title": ("Please confirm", "请确认"),
        "confirm_lead": ("Before I do this, I need your yes:", "执行之前，需要您同意："),
        "confirm_question": ("Shall I go ahead? Say yes, no, or repeat.", "要继续吗？请说“确认”、“取消”或“再说一遍”。"),
        "confirm_yes": ("Yes, do it (Y)", "是，执行（Y）"),
        "confirm_yes_desc": ("Allows exactly this one action. Key Y, or Enter on this button.", "只允许这一个操作。按 Y，或在此按钮上按回车。"),
        "confirm_no": ("No (N)", "否（N）"),
        "confirm_no_desc": ("Refuses. Key N, or Enter on this button. Closing the window also means no. Escape or F4 stops the whole request.", "拒绝。按 N，或在此按钮上按回车。关闭窗口也表示否。按 Esc 或 F4 停止整个请求。"),
        "confirm_repeat": ("Repeat (R)", "重复（R）"),
        "confirm_repeat_desc": ("Reads the question again.", "再读一遍问题。"),
        "confirm_voice": ("Answer by voice (F2)", "用语音回答（F2）"),
        "confirm_voice_desc": ("Hold Space, or press F2, and say yes or no.", "按住空格键或按 F2，然后说“是”或“否”。"),
        "confirm_countdown": ("No answer in {seconds} s means no.", "{seconds} 秒内不回答即视为否。"),
        "confirm_no_answer": ("If you do not answer, the answer is no.", "如果您不回答，就视为否。"),
        "confirm_details": ("Details", "详情"),
        "confirm_said_yes": ("You said yes.", "您同意了。"),
        "confirm_said_no": ("You said no. I will not do it.", "您拒绝了，我不会执行。"),
        "confirm_timeout": ("No answer, so I will not do it.", "没有回答，所以不执行。"),
        # PIN
        "pin_title": ("Caregiver PIN", "照护者 PIN 码"),
        "pin_label": ("PIN", "PIN 码"),
        "pin_desc": ("Enter the caregiver PIN to open the settings.", "输入照护者 PIN 码以打开设置。"),
        "pin_new": ("Choose a caregiver PIN (4 to 12 digits)", "设置照护者 PIN 码（4 到 12 位数字）"),
        "pin_repeat": ("Type the PIN again", "再输入一次 PIN 码"),
        "pin_mismatch": ("The two PINs differ. Please try again.", "两次输入的 PIN 码不一致，请重试。"),
        "pin_wrong": ("Wrong PIN.", "PIN 码错误。"),
        "pin_locked": ("Too many tries. Wait {seconds} seconds.", "尝试次数过多，请等待 {seconds} 秒。"),
        "ok": ("OK", "确定"),
        "ok_desc": ("Accepts and closes.", "确认并关闭。"),
        "cancel": ("Cancel", "取消"),
        "cancel_desc": ("Closes without changing anything.", "关闭，不做任何更改。"),
        # caregiver settings
        "cs_title": ("Caregiver settings", "照护者设置"),
        "cs_apps": ("Allowed apps", "允许使用的应用"),
        "cs_apps_desc": (
            "The assistant may only use the checked apps. Space checks or unchecks the app under focus.",
            "助手只能使用勾选的应用。按空格勾选或取消当前应用。",
        ),
        "cs_categories": ("Always ask before", "以下操作总是先询问"),
        "cs_categories_desc": ("Kinds of action that always need a yes from the user.", "总是需要用户同意的操作类型。"),
        "cs_budget": ("Step budget", "步数上限"),
        "cs_budget_desc": ("The most steps one request may take.", "一个请求最多可执行的步数。"),
        "cs_language": ("Language", "语言"),
        "cs_language_desc": ("Language of the window and the voice.", "窗口和语音的语言。"),
        "cs_voice": ("Chinese voice", "中文声音"),
        "cs_voice_desc": ("The voice that speaks Chinese: female or male.", "朗读中文的声音：女声或男声。"),
        "cs_voice_female": ("Female (Xiaoxiao)", "女声（晓晓）"),
        "cs_voice_male": ("Male (Yunxi)", "男声（云希）"),
        "cs_rate": ("Speech rate (percent)", "语速（百分比）"),
        "cs_rate_desc": ("How fast the voice speaks, 50 to 200 percent.", "朗读速度，50% 到 200%。"),
        "cs_model": ("Runs on", "运行方式"),
        "cs_model_desc": ("Where the assistant's model runs, or the scripted demonstration.", "助手模型的运行位置，或脚本演示。"),
        "cs_model_local4": ("Local model, 4-bit (needs a graphics card)", "本地模型 4 位（需要显卡）"),
        "cs_model_cpu": ("Local model on the processor (slow)", "本地模型，使用处理器（较慢）"),
        "cs_model_server": ("A server on the network", "网络上的服务器"),
        "cs_model_demo": ("Scripted demonstration (simulated phone only)", "脚本演示（仅限模拟手机）"),
        "cs_model_name": ("Model", "模型文件"),
        "cs_model_name_desc": ("Which model weights to run locally or on the server.", "在本地或服务器上运行的模型。"),
        "cs_server": ("Server address", "服务器地址"),
        "cs_server_desc": ("For example http://192.168.1.20:8000/v1", "例如 http://192.168.1.20:8000/v1"),
        "cs_server_bad": ("The server address must start with http:// or https://", "服务器地址必须以 http:// 或 https:// 开头"),
        "cs_pin_change": ("Change PIN…", "更改 PIN 码…"),
        "cs_pin_change_desc": ("Sets a new caregiver PIN.", "设置新的照护者 PIN 码。"),
        "cs_setup": ("First-run setup…", "首次设置向导…"),
        "cs_setup_desc": ("Walks through connecting a phone and downloading models.", "引导连接手机并下载模型。"),
        "cs_saved": ("Settings saved.", "设置已保存。"),
        "cs_no_apps": ("No apps could be read from the phone.", "无法读取手机上的应用。"),
        "cat_payment": ("Payments and purchases", "付款和购买"),
        "cat_message": ("Sending messages or posting", "发送消息或发布内容"),
        "cat_call": ("Phone calls", "拨打电话"),
        "cat_delete": ("Deleting things", "删除内容"),
        "cat_share": ("Sharing contacts, location, files or photos", "分享联系人、位置、文件或照片"),
        "cat_permission": ("Granting permissions", "授予权限"),
        "cat_install": ("Installing or removing apps", "安装或卸载应用"),
        "cat_account": ("Security and account settings", "安全和账户设置"),
        # first-run setup
        "wiz_title": ("First-run setup", "首次设置"),
        "wiz_next": ("Next", "下一步"),
        "wiz_back": ("Back", "上一步"),
        "wiz_finish": ("Finish", "完成"),
        "wiz_speak": ("Read this page aloud", "朗读本页"),
        "wiz_speak_desc": ("Speaks the instructions on this page, step by step.", "逐步朗读本页说明。"),
        "wiz_usb_title": ("1. Turn on USB debugging on the phone", "1. 在手机上开启 USB 调试"),
        "wiz_usb_steps": (
            "Step 1: open Settings on the phone.\n"
            "Step 2: open About phone.\n"
            "Step 3: tap Build number seven times, until the phone says you are a developer.\n"
            "Step 4: go back, open System, then Developer options.\n"
            "Step 5: turn on USB debugging.",
            "第 1 步：在手机上打开“设置”。\n"
            "第 2 步：打开“关于手机”。\n"
            "第 3 步：连续点按“版本号”七次，直到手机提示您已处于开发者模式。\n"
            "第 4 步：返回，打开“系统”，再打开“开发者选项”。\n"
            "第 5 步：开启“USB 调试”。",
        ),
        "wiz_connect_title": ("2. Connect the phone", "2. 连接手机"),
        "wiz_connect_steps": (
            "Connect the phone with a USB cable. On the phone, allow USB debugging for this computer and tick 'Always allow'. Then press Check.\n"
            "Or, over Wi-Fi: on the phone open Developer options, then Wireless debugging, and turn it on. Type the "
            "IP address and port it shows below, then press Check. The first time, choose 'Pair device with "
            "pairing code' on the phone and also type the address and six-digit code that appear.",
            "用 USB 数据线连接手机。在手机上允许这台电脑进行 USB 调试，并勾选“始终允许”。然后按“检查”。\n"
            "也可以通过无线网络连接：在手机上打开“开发者选项”，进入“无线调试”并打开。在下面输入手机显示的 IP 地址和端口，"
            "然后按“检查”。第一次连接时，请在手机上选择“使用配对码配对设备”，并输入显示的地址和六位配对码。",
        ),
        "wiz_wifi": ("Wi-Fi address (optional)", "无线地址（可选）"),
        "wiz_wifi_desc": (
            "The IP address and port shown under Wireless debugging, for example 192.168.1.20:37000. Leave it "
            "empty for a USB cable.",
            "“无线调试”下显示的 IP 地址和端口，例如 192.168.1.20:37000。使用数据线时请留空。",
        ),
        "wiz_pair_code": ("Pairing code (first time only)", "配对码（仅第一次）"),
        "wiz_pair_code_desc": (
            "The six-digit code from 'Pair device with pairing code'; with it, the address above is the pairing "
            "address shown next to the code.",
            "“使用配对码配对设备”中的六位配对码；填写时，上面的地址请填配对码旁显示的配对地址。",
        ),
        "wiz_check": ("Check for a phone", "检查手机"),
        "wiz_check_desc": ("Looks for a connected phone.", "查找已连接的手机。"),
        "wiz_found": ("Found: {phone}", "已找到：{phone}"),
        "wiz_not_found": ("No phone found yet. {detail}", "还没有找到手机。{detail}"),
        "wiz_ime_title": ("3. Install the text-entry helper", "3. 安装文字输入助手"),
        "wiz_ime_steps": (
            "PhoneBuddy types through a small keyboard app on the phone, so it can type any language. Press Install.",
            "手机助手通过手机上的一个小键盘应用输入文字，可以输入任何语言。请按“安装”。",
        ),
        "wiz_install": ("Install", "安装"),
        "wiz_install_desc": ("Installs the text-entry helper on the phone.", "在手机上安装文字输入助手。"),
        "wiz_models_title": ("4. Download the models, or use a server", "4. 下载模型，或使用服务器"),
        "wiz_models_steps": (
            "The speech and assistant models are downloaded once and then work without the internet: press Download. "
            "Or, if a computer on your network runs the assistant's model, type its address in the Server address box, "
            "for example http://192.168.1.20:8000/v1, and press Use this server.",
            "语音（包括中文声音）和助手模型只需下载一次，之后无需联网即可使用：请按“下载”。"
            "如果您网络中的某台电脑在运行助手模型，也可以在“服务器地址”框中输入它的地址，"
            "例如 http://192.168.1.20:8000/v1，然后按“使用此服务器”。",
        ),
        "wiz_download": ("Download", "下载"),
        "wiz_download_desc": ("Downloads the models, with progress.", "下载模型并显示进度。"),
        "wiz_progress": ("Download progress", "下载进度"),
        "wiz_progress_desc": ("How much of the models has been downloaded.", "模型已下载的比例。"),
        "wiz_result": ("Result", "结果"),
        "wiz_not_available": ("Not available yet in this build: {what}", "此版本暂不支持：{what}"),
        "wiz_done": ("Done.", "完成。"),
        "wiz_finished_said": ("Setup is finished. Hold Space or press F2 and say what you need; F1 lists the keys.",
                              "设置完成了。按住空格键或按 F2，说出您需要做什么；按 F1 可以听到所有快捷键。"),
        "wiz_cancelled_said": ("Setup closed before the end. You can open it again from the caregiver settings, F12.",
                               "设置没有完成就关闭了。可以在照护者设置（F12）里再次打开。"),
        "wiz_failed": ("Failed: {detail}", "失败：{detail}"),
        "wiz_zh_voice_failed": (
            "The Chinese voice could not be downloaded. Check the internet connection and press Download again; "
            "until then Chinese is read by a plainer voice.",
            "中文声音没有下载成功。请检查网络连接，然后再按“下载”；在此之前，中文由一个较简单的声音朗读。",
        ),
        "wiz_server": ("Server address", "服务器地址"),
        "wiz_server_desc": (
            "Address of an OpenAI-compatible model server, for example http://192.168.1.20:8000/v1. Leave it empty to run on this computer.",
            "兼容 OpenAI 接口的模型服务器地址，例如 http://192.168.1.20:8000/v1。留空则在本机运行。",
        ),
        "wiz_use_server": ("Use this server", "使用此服务器"),
        "wiz_use_server_desc": (
            "Checks the address and, when it is well formed, saves it: the assistant then runs on that server.",
            "检查地址，格式正确时保存：之后助手将在该服务器上运行。",
        ),
        "wiz_server_bad": (
            "That is not a server address: {address}. Type it like http://192.168.1.20:8000/v1: first http:// or https://, "
            "then the computer's name or number, then a colon and the port if it has one.",
            "这不是有效的服务器地址：{address}。请按此格式输入：http://192.168.1.20:8000/v1，"
            "先写 http:// 或 https://，再写电脑的名称或 IP 地址，如有端口，再加冒号和端口号。",
        ),
        "wiz_server_empty": (
            "Type the server address first, for example http://192.168.1.20:8000/v1.",
            "请先输入服务器地址，例如 http://192.168.1.20:8000/v1。",
        ),
        "wiz_server_saved": (
            "Saved. The assistant now runs on the server {address}.",
            "已保存。助手现在使用服务器 {address} 运行。",
        ),
        "wiz_server_pin": (
            "The server was not changed: the caregiver's PIN is needed to change where the phone's screen is sent.",
            "服务器没有更改：要更改手机屏幕发送到哪里，需要照护人的 PIN 码。",
        ),
        # first-run setup: the welcome and the language choice
        "wiz_welcome_title": ("Welcome to PhoneBuddy", "欢迎使用手机助手"),
        "wiz_welcome_steps": (
            "This setup gets PhoneBuddy ready in a few steps, by keyboard or by voice. "
            "First choose your language: press E for English or C for Chinese, or use the arrow keys, "
            "then press Enter to go on. To use your voice, press F2, say a language, next, back or repeat, "
            "then press F2 again. 要使用中文，请按 C 键。",
            "本向导分几步帮您设置好手机助手，可以用键盘或语音操作。"
            "首先选择语言：按 C 键选择中文，按 E 键选择英文，也可以用方向键选择，然后按回车继续。"
            "要用语音操作，请按 F2，说出语言、“下一步”、“上一步”或“重复”，再按一次 F2。For English, press E.",
        ),
        "wiz_lang_group": ("Language", "语言"),
        "wiz_lang_en": ("English (E)", "English 英文（E）"),
        "wiz_lang_en_desc": (
            "PhoneBuddy speaks and shows everything in English. Key E.",
            "手机助手用英文显示和朗读。按 E 键。",
        ),
        "wiz_lang_zh": ("中文 Chinese (C)", "中文（C）"),
        "wiz_lang_zh_desc": (
            "PhoneBuddy speaks and shows everything in Chinese. Key C.",
            "手机助手用中文显示和朗读。按 C 键。",
        ),
        "wiz_voice": ("Speak a command (F2)", "说出指令（F2）"),
        "wiz_voice_desc": (
            "Press F2 or this button, speak, then press it again. Say English or Chinese, next, back, repeat, "
            "or the name of the page's button.",
            "按 F2 或此按钮，说话，然后再按一次。可以说“中文”或“英文”、“下一步”、“上一步”、“重复”，或本页按钮的名称。",
        ),
        "wiz_voice_unknown": (
            "I heard: {text}. Say English or Chinese, next, back, repeat, or the name of the page's button.",
            "我听到的是：{text}。请说“中文”或“英文”、“下一步”、“上一步”、“重复”，或本页按钮的名称。",
        ),
        "wiz_no_voice": (
            "Voice input is not available here. Use the keyboard: Tab moves between controls and Enter goes on.",
            "这里无法使用语音输入。请使用键盘：Tab 键在控件之间移动，回车键继续。",
        ),
        "lang_en": ("English", "英文 English"),
        "lang_zh": ("Chinese 中文", "中文"),
    },
)


# The turn's own lines (what was heard, read back, answered) live with the assistant (phonebuddy.assistant).
APP.entries.update(TURN.entries)


def tr(key: str, lang: str, /, **kwargs: object) -> str:
    """The catalog text for `key` in `lang`, formatted."""
    return APP.get(key, lang, **kwargs)
