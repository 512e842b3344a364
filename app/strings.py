"""Every user-facing string of the desktop window, in English and Chinese (catalog "app").

Widgets never hold literal text: each has a `retranslate(lang)` that reads from here, so switching the
language at run time re-labels every control, its accessible name and its description at once.
"""

from __future__ import annotations

from assistant_core import languages as langs
from assistant_core.i18n import Catalog
from phonebuddy.assistant import MSG as TURN

APP = Catalog(
    "app",
    {
        # window and areas
        "window_title": "PhoneBuddy",
        "window_desc": "PhoneBuddy desktop assistant: speak or type a request and it operates your phone.",
        "sim_phone": "Simulated phone (PhoneWorld-lite)",
        "sim_phone_offer": "No phone is attached. You can try PhoneBuddy on a simulated phone.",
        "use_sim": "Use the simulated phone",
        "use_sim_desc": "Opens PhoneWorld-lite, a simulated phone, so you can try every feature without a real phone.",
        "mirror": "Phone screen",
        "mirror_desc": "Live picture of the phone. Click to tap the phone there. With 'send all keys to the phone' on, keys go to the phone.",
        "mirror_empty": "No phone picture yet",
        "send_keys": "Send all keys to the phone (F9)",
        "send_keys_desc": "When on, every key except F9 goes to the phone, so you can drive TalkBack directly. F9 turns it off.",
        "send_keys_on": "Keys now go to the phone. Press F9 to take the keyboard back.",
        "send_keys_off": "Keys stay with PhoneBuddy.",
        "conversation": "Conversation",
        "conversation_desc": "Every request, step, question and answer, newest last. Use the arrow keys to review.",
        "talk": "Hold to talk (Space) · F2",
        "talk_listening": "Listening… release to send",
        "talk_desc": "Push to talk: hold this button with Space or the mouse while you speak, or press F2 to start and stop.",
        "request": "Typed request",
        "request_desc": "Type what you want done on the phone and press Enter.",
        "request_placeholder": "For example: turn on Wi-Fi",
        "send": "Send",
        "send_desc": "Sends the typed request to the assistant.",
        "stop": "Stop (Esc)",
        "stop_desc": "Stops the assistant at once and stops speech.",
        "settings": "Caregiver settings (F12)",
        "settings_desc": "Opens the caregiver settings. A PIN is needed.",
        "help": "Keyboard shortcuts (F1)",
        "help_desc": "Lists every keyboard shortcut and reads them aloud.",
        "status": "Status",
        "status_desc": "Phone, model and what the assistant is doing now.",
        "status_line": "Phone: {phone} · Agent: {agent} · {state}",
        "announcements": "Announcements",
        "no_phone": "none",
        # states
        "state_idle": "Ready",
        "state_listening": "Listening",
        "state_transcribing": "Understanding your words",
        "state_working": "Working",
        "state_waiting": "Waiting for your answer",
        # agent labels
        "agent_demo": "Scripted demonstration (not a model)",
        "agent_local_4bit": "Local model, 4-bit",
        "agent_local_cpu": "Local model, CPU",
        "agent_server": "Server {address}",
        "agent_none": "No agent available",
        "demo_note": "No model is downloaded yet, so this is a scripted demonstration: a script that knows the simulated phone plays the assistant.",
        # conversation entries
        "step": "Step {n}: {what}",
        "assistant": "Assistant: {text}",
        "question": "Question: {text}",
        "blocked": "Not done: {text}",
        "done": "Done: {text}",
        "failed": "Stopped: {text}",
        "error": "Problem: {text}",
        "startup_no_phone": ("PhoneBuddy is ready, but no phone is attached. Press F5 to try the simulated phone, or connect a phone "
            "by USB with USB debugging on."),
        "startup_phone": "PhoneBuddy is ready. Phone: {phone}.",
        "sc_sim": "F5: use the simulated phone",
        "sc_channel": "F11: PhoneBuddy's own voice, your screen reader, or both",
        "channel_title": "Which voice?",
        "channel_question": ("{reader} is running. Should PhoneBuddy speak with its own voice, or leave speech to your screen "
            "reader? Press V for PhoneBuddy's voice, S for your screen reader. F11 changes it later."),
        "channel_own": "PhoneBuddy's voice (V)",
        "channel_own_desc": "PhoneBuddy speaks; your screen reader is not sent its messages.",
        "channel_reader": "My screen reader (S)",
        "channel_reader_desc": "Your screen reader reads PhoneBuddy's messages; PhoneBuddy stays silent.",
        "channel_now_own_voice": "Now PhoneBuddy's own voice speaks.",
        "channel_now_screen_reader": "Now your screen reader speaks; PhoneBuddy stays silent.",
        "channel_now_both": "Now PhoneBuddy's voice and the screen reader both get every message.",
        "no_mic": "Voice input is not available here. Please type your request.",
        "tapped": "Tapped the phone at {x}, {y}.",
        "handover_key": "Or press F10.",
        "done_word": "done",
        "nothing_handed_over": "There is no step waiting for you.",
        "pin_pad": "PIN for the simulated phone's protected screen",
        "pin_pad_desc": ("Type the digits and press Enter: they are pressed on the simulated phone's own keypad, "
                         "never read aloud or kept. Then say or type done, or press F10."),
        "pin_pad_shown": ("The simulated phone is showing a protected PIN screen. The PIN box is focused: type the "
                          "PIN and press Enter, then press F10."),
        "pin_pressed": "Pressed {n} digits on the simulated phone.",
        "pin_not_pressed": "The simulated phone shows no keypad for these digits. Type digits only.",
        "mirror_busy": "The assistant is using the phone. Stop it first to tap yourself.",
        "language_now": "Language: English",
        "contrast_on": "High contrast on.",
        "contrast_off": "High contrast off.",
        "rate_now": "Speech rate {rate} percent.",
        "nothing_to_repeat": "Nothing to repeat yet.",
        # shortcuts (F1)
        "shortcuts_title": "Keyboard shortcuts",
        "shortcuts_intro": "PhoneBuddy avoids the Insert and Caps Lock keys of screen readers and the Alt keys of TalkBack.",
        "sc_help": "F1: list these shortcuts",
        "sc_talk": "F2: start or stop listening; or hold Space on the talk button",
        "sc_repeat": "F3: repeat what was last said",
        "sc_stop": "Escape or F4: stop the assistant and the speech",
        "sc_request": "Ctrl+L: go to the request box",
        "sc_areas": "F6: move between the areas of the window",
        "sc_contrast": "F7: high contrast on or off",
        "sc_language": "F8: switch between English and Chinese",
        "sc_keys": "F9: send all keys to the phone, or take them back",
        "sc_rate": "Ctrl+Up and Ctrl+Down: speak faster or slower",
        "sc_done": "F10: tell me you finished a step I handed to you",
        "sc_settings": "F12: caregiver settings",
        "sc_forget": "Ctrl+Shift+F: forget a remembered Wi-Fi phone that is not answering",
        "sc_quit": "Ctrl+Q: quit",
        "sc_any": "Any key stops the speech.",
        "close": "Close",
        "close_desc": "Closes this window.",
        # confirmation dialog
        "confirm_title": "Please confirm",
        "confirm_lead": "Before I do this, I need your yes:",
        "confirm_question": "Shall I go ahead? Say yes, no, or repeat.",
        "confirm_yes": "Yes, do it (Y)",
        "confirm_yes_desc": "Allows exactly this one action. Key Y, or Enter on this button.",
        "confirm_no": "No (N)",
        "confirm_no_desc": "Refuses. Key N, or Enter on this button. Closing the window also means no. Escape or F4 stops the whole request.",
        "confirm_repeat": "Repeat (R)",
        "confirm_repeat_desc": "Reads the question again.",
        "confirm_voice": "Answer by voice (F2)",
        "confirm_voice_desc": "Hold Space, or press F2, and say yes or no.",
        "confirm_countdown": "No answer in {seconds} s means no.",
        "confirm_no_answer": "If you do not answer, the answer is no.",
        "confirm_details": "Details",
        "confirm_said_yes": "You said yes.",
        "confirm_said_no": "You said no. I will not do it.",
        "confirm_timeout": "No answer, so I will not do it.",
        # PIN
        "pin_title": "Caregiver PIN",
        "pin_label": "PIN",
        "pin_desc": "Enter the caregiver PIN to open the settings.",
        "pin_new": "Choose a caregiver PIN (4 to 12 digits)",
        "pin_repeat": "Type the PIN again",
        "pin_mismatch": "The two PINs differ. Please try again.",
        "pin_wrong": "Wrong PIN.",
        "pin_locked": "Too many tries. Wait {seconds} seconds.",
        "ok": "OK",
        "ok_desc": "Accepts and closes.",
        "cancel": "Cancel",
        "cancel_desc": "Closes without changing anything.",
        # caregiver settings
        "cs_title": "Caregiver settings",
        "cs_apps": "Allowed apps",
        "cs_apps_desc": "The assistant may only use the checked apps. Space checks or unchecks the app under focus.",
        "cs_categories": "Always ask before",
        "cs_categories_desc": "Kinds of action that always need a yes from the user.",
        "cs_budget": "Step budget",
        "cs_budget_desc": "The most steps one request may take.",
        "cs_language": "Language",
        "cs_language_desc": "Language of the window and the voice.",
        "cs_voice": "Chinese voice",
        "cs_voice_desc": "The voice that speaks Chinese: female or male.",
        "cs_voice_female": "Female (Xiaoxiao)",
        "cs_voice_male": "Male (Yunxi)",
        "cs_rate": "Speech rate (percent)",
        "cs_rate_desc": "How fast the voice speaks, 50 to 200 percent.",
        "cs_model": "Runs on",
        "cs_model_desc": "Where the assistant's model runs, or the scripted demonstration.",
        "cs_model_local4": "Local model, 4-bit (needs a graphics card)",
        "cs_model_cpu": "Local model on the processor (slow)",
        "cs_model_server": "A server on the network",
        "cs_model_demo": "Scripted demonstration (simulated phone only)",
        "cs_model_name": "Model",
        "cs_model_name_desc": "Which model weights to run locally or on the server.",
        "cs_server": "Server address",
        "cs_server_desc": "For example http://192.168.1.20:8000/v1",
        "cs_server_bad": "The server address must start with http:// or https://",
        "cs_pin_change": "Change PIN…",
        "cs_pin_change_desc": "Sets a new caregiver PIN.",
        "cs_setup": "First-run setup…",
        "cs_setup_desc": "Walks through connecting a phone and downloading models.",
        "cs_saved": "Settings saved.",
        "cs_no_apps": "No apps could be read from the phone.",
        "cat_payment": "Payments and purchases",
        "cat_message": "Sending messages or posting",
        "cat_call": "Phone calls",
        "cat_delete": "Deleting things",
        "cat_share": "Sharing contacts, location, files or photos",
        "cat_permission": "Granting permissions",
        "cat_install": "Installing or removing apps",
        "cat_account": "Security and account settings",
        # first-run setup
        "wiz_title": "First-run setup",
        "wiz_next": "Next",
        "wiz_back": "Back",
        "wiz_finish": "Finish",
        "wiz_speak": "Read this page aloud",
        "wiz_speak_desc": "Speaks the instructions on this page, step by step.",
        "wiz_usb_title": "1. Turn on USB debugging on the phone",
        "wiz_usb_steps": ("Step 1: open Settings on the phone.\n"
            "Step 2: open About phone.\n"
            "Step 3: tap Build number seven times, until the phone says you are a developer.\n"
            "Step 4: go back, open System, then Developer options.\n"
            "Step 5: turn on USB debugging."),
        "wiz_connect_title": "2. Connect the phone",
        "wiz_connect_steps": ("Connect the phone with a USB cable. On the phone, allow USB debugging for this computer and tick 'Always allow'. Then press Check.\n"
            "Or, over Wi-Fi: on the phone open Developer options, then Wireless debugging, and turn it on. Type the "
            "IP address and port it shows below, then press Check. The first time, choose 'Pair device with "
            "pairing code' on the phone and also type the address and six-digit code that appear."),
        "wiz_wifi": "Wi-Fi address (optional)",
        "wiz_wifi_desc": ("The IP address and port shown under Wireless debugging, for example 192.168.1.20:37000. Leave it "
            "empty for a USB cable."),
        "wiz_pair_code": "Pairing code (first time only)",
        "wiz_pair_code_desc": ("The six-digit code from 'Pair device with pairing code'; with it, the address above is the pairing "
            "address shown next to the code."),
        "wiz_check": "Check for a phone",
        "wiz_check_desc": "Looks for a connected phone.",
        "wiz_found": "Found: {phone}",
        "wiz_not_found": "No phone found yet. {detail}",
        "wiz_ime_title": "3. Install the text-entry helper",
        "wiz_ime_steps": "PhoneBuddy types through a small keyboard app on the phone, so it can type any language. Press Install.",
        "wiz_install": "Install",
        "wiz_install_desc": "Installs the text-entry helper on the phone.",
        "wiz_models_title": "4. Download the models, or use a server",
        "wiz_models_steps": ("The speech and assistant models are downloaded once and then work without the internet: press Download. "
            "Or, if a computer on your network runs the assistant's model, type its address in the Server address box, "
            "for example http://192.168.1.20:8000/v1, and press Use this server."),
        "wiz_download": "Download",
        "wiz_download_desc": "Downloads the models, with progress.",
        "wiz_progress": "Download progress",
        "wiz_progress_desc": "How much of the models has been downloaded.",
        "wiz_result": "Result",
        "wiz_not_available": "Not available yet in this build: {what}",
        "wiz_done": "Done.",
        "wiz_finished_said": "Setup is finished. Hold Space or press F2 and say what you need; F1 lists the keys.",
        "wiz_cancelled_said": "Setup closed before the end. You can open it again from the caregiver settings, F12.",
        "wiz_failed": "Failed: {detail}",
        "wiz_zh_voice_failed": ("The Chinese voice could not be downloaded. Check the internet connection and press Download again; "
            "until then Chinese is read by a plainer voice."),
        "wiz_server": "Server address",
        "wiz_server_desc": "Address of an OpenAI-compatible model server, for example http://192.168.1.20:8000/v1. Leave it empty to run on this computer.",
        "wiz_use_server": "Use this server",
        "wiz_use_server_desc": "Checks the address and, when it is well formed, saves it: the assistant then runs on that server.",
        "wiz_server_bad": ("That is not a server address: {address}. Type it like http://192.168.1.20:8000/v1: first http:// or https://, "
            "then the computer's name or number, then a colon and the port if it has one."),
        "wiz_server_empty": "Type the server address first, for example http://192.168.1.20:8000/v1.",
        "wiz_server_saved": "Saved. The assistant now runs on the server {address}.",
        "wiz_server_pin": "The server was not changed: the caregiver's PIN is needed to change where the phone's screen is sent.",
        # first-run setup: the welcome and the language choice
        "wiz_welcome_title": "Welcome to PhoneBuddy",
        "wiz_welcome_steps": ("This setup gets PhoneBuddy ready in a few steps, by keyboard or by voice. "
            "First choose your language: press E for English or C for Chinese, or use the arrow keys, "
            "then press Enter to go on. To use your voice, press F2, say a language, next, back or repeat, "
            "then press F2 again. 要使用中文，请按 C 键。"),
        "wiz_lang_group": "Language",
        "wiz_lang_en": "English (E)",
        "wiz_lang_en_desc": "PhoneBuddy speaks and shows everything in English. Key E.",
        "wiz_lang_zh": "中文 Chinese (C)",
        "wiz_lang_zh_desc": "PhoneBuddy speaks and shows everything in Chinese. Key C.",
        "wiz_voice": "Speak a command (F2)",
        "wiz_voice_desc": ("Press F2 or this button, speak, then press it again. Say English or Chinese, next, back, repeat, "
            "or the name of the page's button."),
        "wiz_voice_unknown": "I heard: {text}. Say English or Chinese, next, back, repeat, or the name of the page's button.",
        "wiz_no_voice": "Voice input is not available here. Use the keyboard: Tab moves between controls and Enter goes on.",
        "lang_en": "English",
        "lang_zh": "Chinese 中文",
    },
)


# The turn's own lines (what was heard, read back, answered) live with the assistant (phonebuddy.assistant).
APP.entries.update(TURN.entries)


def tr(key: str, lang: str, /, **kwargs: object) -> str:
    """The catalog text for `key` in `lang`, formatted."""
    return APP.get(key, lang, **kwargs)


def language_label(code: str, lang: str) -> str:
    """A language's name in the settings' list shown in `lang`: the app's own message for it ("lang_zh")
    when there is one, else the registry's names (assistant_core.languages: "Français (French)")."""
    return tr(f"lang_{code}", lang) if f"lang_{code}" in APP else langs.get(code).label(lang)


def wizard_language_label(code: str, lang: str) -> str:
    """A language's button on the setup wizard's first page, with the letter that chooses it."""
    if f"wiz_lang_{code}" in APP:
        return tr(f"wiz_lang_{code}", lang)
    keys = langs.get(code).keys
    return f"{langs.get(code).label(lang)} ({' / '.join(keys)})" if keys else langs.get(code).label(lang)
