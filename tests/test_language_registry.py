"""A third spoken language, added for real (issue 26, item 5): a language folder outside the app, found
through PHONEBUDDY_LANGUAGES, with its record (`language.toml`) and its message catalog (a .po compiled to
.mo). Everything that offers or configures a language reads assistant_core.languages, so the command lines,
the settings dialog, the setup wizard, F8, the recogniser, the voice and the answers all know it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from assistant_core import i18n
from assistant_core import languages as langs

ROOT = Path(__file__).resolve().parents[1]

FRENCH = """\
name = "Français"
english_name = "French"
asr_prompt = "Voici une phrase en français."
hotwords = ["Wi-Fi", "Paramètres", "Bluetooth"]
tts_engine = "piper"
voice = "fr_FR-siwis-medium"
espeak_voice = "fr"
keys = ["F"]
spoken_names = ["french", "français", "法语"]
yes_words = ["oui", "oui vas-y", "d'accord"]
no_words = ["non", "non merci", "annule"]
repeat_words = ["répète", "pardon"]
"""

# (context, English) -> French: a few messages, the rest reads in English until translated.
TRANSLATED = {
    ("app.send", "Send"): "Envoyer",
    ("app.cs_language", "Language"): "Langue",
    ("app.language_now", None): "Langue : français",
    ("app.wiz_welcome_title", None): "Bienvenue dans PhoneBuddy",
}


def _check_script():
    spec = importlib.util.spec_from_file_location("i18n_check", ROOT / "scripts" / "i18n_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("i18n_check", module)
    spec.loader.exec_module(module)
    return module


def write_language(root: Path) -> list[str]:
    """The French folder a translator would ship: language.toml and phonebuddy.po, then the compiled .mo.
    Returns every file in it (what adding the language takes, beside the downloaded voice)."""
    from babel.messages.catalog import Catalog

    from app.strings import APP

    check = _check_script()
    folder = root / "fr"
    folder.mkdir(parents=True)
    (folder / "language.toml").write_text(FRENCH, encoding="utf-8")
    catalog = Catalog(locale="fr")
    for (ctx, english), french in TRANSLATED.items():
        key = ctx.split(".", 1)[1]
        catalog.add(english or APP[key].msgid, french, context=ctx)
    po = check.po_path(root, "fr")
    po.parent.mkdir(parents=True)
    po.write_bytes(check.render_po(catalog))
    check.compile_all(root)
    return sorted(p.relative_to(root).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def french(tmp_path, monkeypatch):
    files = write_language(tmp_path / "languages")
    monkeypatch.setenv(langs.ENV_VAR, str(tmp_path / "languages"))
    i18n.reload()  # what a start does: the registry and the catalogs read again
    yield files
    monkeypatch.undo()
    i18n.reload()


def test_the_builtin_languages_without_any_folder():
    assert langs.codes() == ("en", "zh") and langs.choices() == ("en", "zh")
    assert langs.get("zh-CN").code == "zh" and langs.get("cmn").code == "zh" and langs.get("xx").code == "en"
    assert langs.next_code("en") == "zh" and langs.next_code("zh") == "en"  # F8 as before: the two take turns


def test_a_third_language_is_three_files_and_a_voice(french):
    assert french == [
        "fr/LC_MESSAGES/phonebuddy.mo", "fr/LC_MESSAGES/phonebuddy.po", "fr/language.toml"]
    assert langs.codes() == ("en", "zh", "fr") and i18n.LANGS == ("en", "fr", "zh")
    assert i18n.normalize_lang("fr-CA") == "fr" and langs.get("fr").label("en") == "Français (French)"


def test_messages_render_from_its_catalog(french):
    from app.strings import APP, tr
    from assistant_core.settings import CaregiverSettings

    assert APP["send"].get("fr") == "Envoyer" and tr("cs_language", "fr") == "Langue"
    assert APP["send"].get("zh") == "发送" and APP["send"].get("en") == "Send"
    assert APP["stop"].get("fr") == APP["stop"].en  # not translated yet: English
    assert CaregiverSettings(language="fr").language == "fr"  # the caregiver settings keep it


def test_every_command_line_offers_it(french):
    from app.main import build_parser
    from harness.cli import _parser as devices_parser
    from phonebuddy.privacy_cli import _parser as privacy_parser
    from speech.cli import _parser as speech_parser

    assert build_parser().parse_args(["--lang", "fr"]).lang == "fr"
    assert speech_parser().parse_args(["say", "Bonjour", "--lang", "fr"]).lang == "fr"
    assert speech_parser().parse_args(["transcribe", "a.wav", "--language", "fr"]).language == "fr"
    assert speech_parser().parse_args(["say", "x", "--ui-lang", "fr"]).ui_lang == "fr"
    assert privacy_parser().parse_args(["--lang", "fr", "show"]).lang == "fr"
    assert devices_parser().parse_args(["--lang", "fr", "list"]).lang == "fr"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--lang", "de"])  # a language nobody added


def test_the_recogniser_listens_for_it(french):
    from app.voice import WhisperTranscription
    from speech.asr import AsrSettings, FasterWhisperTranscriber, TranscriptStatus

    settings = AsrSettings()
    assert settings.languages == ("en", "zh", "fr")  # detection may now answer French
    assert settings.prompt_for("fr") == "Voici une phrase en français." and settings.prompt_for("en") == ""
    assert FasterWhisperTranscriber(settings)._restrict([("ja", 0.5), ("fr", 0.3), ("en", 0.2)])[0] == "fr"

    calls = []

    class Model:  # faster-whisper's transcribe, as the long-audio path calls it
        def transcribe(self, audio, **kwargs):
            calls.append(kwargs)
            return iter(()), None

    FasterWhisperTranscriber(settings)._run(Model(), np.zeros(16_000, np.float32), "fr", ("Paramètres",))
    assert calls[-1]["language"] == "fr" and calls[-1]["initial_prompt"] == "Voici une phrase en français."

    class Stub:  # the window's transcriber: which language and hint words it is asked for
        def transcribe(self, samples, *, language=None, hotwords=()):
            calls.append({"language": language, "hotwords": tuple(hotwords)})
            return SimpleNamespace(status=TranscriptStatus.OK, text="Ouvre les paramètres")

    assert WhisperTranscription(Stub())(np.zeros(16_000, np.float32), "fr") == "Ouvre les paramètres"
    assert calls[-1] == {"language": "fr", "hotwords": ("Wi-Fi", "Paramètres", "Bluetooth")}


def test_the_voice_is_its_registered_piper_voice(french, tmp_path):
    from speech.messages import ModelMissingError
    from speech.models import ModelLocator
    from speech.tts import EspeakEngine, PiperEngine, VoiceRouter, default_router, default_voices

    assert default_voices()["fr"] == "fr_FR-siwis-medium" and EspeakEngine().VOICES["fr"] == "fr"
    assert "fr" not in default_router().preferred  # piper first, as registered (Kokoro stays Chinese)
    asked = []

    class Locator(ModelLocator):
        def piper_voice(self, voice):
            asked.append(voice)
            return super().piper_voice(voice)

    piper = PiperEngine(locator=Locator(cache_dir=tmp_path / "models", allow_download=False))
    with pytest.raises(ModelMissingError):
        piper.synthesize("Bonjour.", "fr")  # the voice data is not here: it names the voice to fetch
    assert asked == ["fr_FR-siwis-medium"]

    class Engine:  # a voice that speaks only what it is told it has
        def __init__(self, *speaks):
            self.speaks = speaks

        def available(self, lang):
            return lang in self.speaks

    router = VoiceRouter(Engine("en", "fr"), fallback=None)
    assert [(p.lang, p.text) for p in router.plan("Bonjour. Ça va?", "fr")] == [("fr", "Bonjour."), ("fr", "Ça va?")]
    # Without a French voice: the notice once in English (the language it can speak), then the sentence.
    router = VoiceRouter(Engine("en"), fallback=None)
    plans = router.plan("Bonjour.", "fr")
    assert [p.lang for p in plans] == ["en", "en"] and "Français (French)" in plans[0].text


def test_its_answer_words_are_heard(french):
    from assistant_core.answers import Heard, classify_answer

    assert classify_answer("Oui.") is Heard.YES and classify_answer("d'accord") is Heard.YES
    assert classify_answer("Non merci") is Heard.NO and classify_answer("répète") is Heard.REPEAT
    assert classify_answer("yes") is Heard.YES and classify_answer("取消") is Heard.NO  # the others unchanged


def test_the_settings_dialog_lists_it_and_keeps_it(french, qtbot):
    from app.agent import AgentChoice, AgentKind
    from app.settings_dialog import CaregiverSettingsDialog
    from assistant_core.settings import CaregiverSettings

    dialog = CaregiverSettingsDialog(CaregiverSettings(language="fr"), AgentChoice(AgentKind.DEMO), {}, lang="fr")
    qtbot.addWidget(dialog)
    choice = dialog.language
    assert [choice.itemData(i) for i in range(choice.count())] == ["en", "zh", "fr"]
    assert choice.currentData() == "fr" and choice.itemText(2) == "Français"
    dialog.retranslate("en")
    assert choice.itemText(2) == "Français (French)" and choice.itemText(1) == "Chinese 中文"
    dialog.ok.click()
    assert dialog.result_settings().language == "fr"


def test_the_wizard_and_f8_reach_it(french, qtbot):
    from app.settings_flow import make_setup_wizard
    from app.setup_wizard import SetupActions, WizardCommand, parse_wizard_command
    from tests.app_fixtures import make_window

    window = make_window(qtbot, lang="en")
    wizard = make_setup_wizard(window, actions=SetupActions(check_phone=lambda: "Phone X",
                                                           install_ime=lambda apk: "ADBKeyboard",
                                                           download=lambda progress: "done"))
    qtbot.addWidget(wizard)
    wizard.show()
    page = wizard.language_page
    assert list(page.radios) == ["en", "zh", "fr"] and page.radios["fr"].text() == "Français (French) (F)"
    qtbot.keyClick(page.english, Qt.Key.Key_F)  # its letter, as E and C choose English and 中文
    assert wizard.lang == window.lang == "fr" and page.radios["fr"].isChecked()
    assert page.radios["fr"].text() == "Français (F)" and page.title() == "Bienvenue dans PhoneBuddy"
    assert window.announcer.log[-1].text.startswith("Langue : français. Bienvenue dans PhoneBuddy")
    qtbot.keyClick(page.radios["fr"], Qt.Key.Key_F8)  # F8 goes on to the first language again
    assert wizard.lang == window.lang == "en"
    assert parse_wizard_command("Français, s'il vous plaît") is WizardCommand.LANGUAGE
    assert parse_wizard_command("中文") is WizardCommand.CHINESE  # the built-in ones as before
    assert wizard.hear("français") is WizardCommand.LANGUAGE and wizard.lang == window.lang == "fr"
    wizard.close()
    window.toggle_language()  # the window's F8: en -> zh -> fr -> en
    assert window.lang == "en"
    window.toggle_language()
    assert window.lang == "zh"
    window.toggle_language()
    assert window.lang == "fr" and window.send_button.text() == "Envoyer"  # the window re-labelled from its catalog


def test_a_bad_language_file_is_skipped(tmp_path, monkeypatch, caplog):
    folder = tmp_path / "xx"
    folder.mkdir()
    (folder / "language.toml").write_text('name = "X"\nvoices = "typo"\n', encoding="utf-8")
    monkeypatch.setenv(langs.ENV_VAR, str(tmp_path))
    langs.reload()
    try:
        assert langs.codes() == ("en", "zh") and "unknown fields" in caplog.text
    finally:
        monkeypatch.undo()
        langs.reload()
