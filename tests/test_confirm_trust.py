"""Confirmations a blind person can trust: what each key does in the dialog (Space never answers, early
and held keys are dropped, focus starts on No, Escape stops the run), the read-back naming the payee and
recipient from the fields that hold them (never an empty field's hint, never a screen title that is not a
person), and endings that say what really happened, in both languages."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from app.confirm_dialog import GRACE_MS, ConfirmDialog, ConfirmPrompt
from assistant_core.confirm import ConfirmationRequest, ScriptedConfirmer, find_recipient
from assistant_core.endings import SAY, Ending, ending_of, ending_text
from assistant_core.events import Outcome
from assistant_core.loop import MSG as LOOP_MSG
from assistant_core.loop import LoopConfig, run_episode
from assistant_core.safety import GateContext
from assistant_core.types import ConfirmAnswer, Observation, UIElement

PROMPT = ConfirmPrompt(summary="I'm about to make a call: press “Call”, to Sophie Tang in Phone. Shall I go ahead?")


def _dialog(qtbot, *, grace_ms=GRACE_MS, on_stop=None):
    said: list[str] = []
    dialog = ConfirmDialog(PROMPT, lang="en", announce=lambda text, cue: said.append(text), timeout_s=None,
                           grace_ms=grace_ms, on_stop=on_stop)
    qtbot.addWidget(dialog)
    answers: list[ConfirmAnswer] = []
    holds: list[bool] = []
    dialog.answered.connect(answers.append)
    dialog.voice_hold.connect(holds.append)
    dialog.start()
    qtbot.waitExposed(dialog)
    return dialog, answers, holds, said


def _key(widget, key, *, release=False, autorepeat=False, text=""):
    kind = QEvent.Type.KeyRelease if release else QEvent.Type.KeyPress
    QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text, autorepeat))


def test_focus_starts_on_no_and_space_never_answers(qtbot):
    dialog, answers, holds, _ = _dialog(qtbot, grace_ms=0)
    assert dialog.focusWidget() is dialog.no_button
    target = dialog.focusWidget()
    _key(target, Qt.Key.Key_Space, text=" ")
    for _ in range(10):  # held: the X server repeats it
        _key(target, Qt.Key.Key_Space, autorepeat=True, text=" ")
    _key(target, Qt.Key.Key_Space, release=True, text=" ")
    qtbot.wait(50)
    assert answers == []  # not "no" either: Space is the push-to-talk key
    assert holds == [True, False]  # it asked to listen while held, once
    dialog.yes_button.setFocus()
    _key(dialog.yes_button, Qt.Key.Key_Space, text=" ")
    _key(dialog.yes_button, Qt.Key.Key_Space, release=True, text=" ")
    qtbot.wait(50)
    assert answers == []  # Space on the Yes button does not press it


def test_keys_in_the_grace_period_are_dropped_then_a_deliberate_y_answers(qtbot):
    dialog, answers, _, said = _dialog(qtbot, grace_ms=400)
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_Y)
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_N)
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_Return)
    assert answers == [] and len(dialog.dropped_keys) == 3
    assert len(said) == 1  # the question is still being read, not interrupted or repeated
    qtbot.wait(450)
    _key(dialog.no_button, Qt.Key.Key_Y, autorepeat=True, text="y")  # a held Y is never an answer
    assert answers == []
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_Y)
    assert answers == [ConfirmAnswer.YES]


def test_enter_presses_the_focused_button_only(qtbot):
    dialog, answers, _, _ = _dialog(qtbot, grace_ms=0)
    qtbot.keyClick(dialog.no_button, Qt.Key.Key_Tab)
    assert dialog.focusWidget() is dialog.yes_button
    qtbot.keyClick(dialog.yes_button, Qt.Key.Key_Return)
    assert answers == [ConfirmAnswer.YES]


@pytest.mark.parametrize("key", [Qt.Key.Key_Escape, Qt.Key.Key_F4])
def test_stop_keys_stop_the_run_even_in_the_grace_period(qtbot, key):
    stops: list[int] = []
    dialog, answers, _, _ = _dialog(qtbot, grace_ms=10_000, on_stop=lambda: stops.append(1))
    qtbot.keyClick(dialog.no_button, key)
    assert stops == [1]
    assert answers == []  # the window closes the question itself when it stops the run


def test_a_question_queued_before_the_stop_never_opens(qtbot):
    """Escape raced the loop: the worker had already emitted its question when the stop came."""
    from tests.app_fixtures import make_window

    window = make_window(qtbot)
    window.submit_request("Call Sophie Tang")
    window.stop_run()
    window._on_confirm_requested(PROMPT)  # the queued request arrives after the stop
    assert window._dialog is None
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        pass
    assert window._dialog is None


# -- the read-back: from the fields that hold it ------------------------------------------------------


def _readbacks(task_id: str, lang: str) -> list[ConfirmationRequest]:
    from harness.phoneworld import SimDevice
    from harness.phoneworld.oracle import OraclePolicy
    from harness.phoneworld.tasks import make_world

    world, _ = make_world(task_id, seed=0, language=lang)
    device = SimDevice(world, screenshots=False)
    confirmer = ScriptedConfirmer([ConfirmAnswer.YES] * 8)
    labels = device.installed_apps()
    ctx = GateContext(allowed_apps=frozenset(labels), app_labels=labels, lang=lang)
    gen = run_episode("x", device=device, policy=OraclePolicy(task_id, 0, world, language=lang), confirmer=confirmer,
                      context=ctx, sleep=lambda s: None,
                      config=LoopConfig(one_question_per_purchase=False))  # every read-back is asked
    for _ in gen:
        pass
    return confirmer.seen


@pytest.mark.parametrize(("lang", "payee", "unknown"), [
    ("en", "Shop", "I can't tell who will receive the money."),
    ("zh", "商城", "我看不出钱会付给谁。"),
])
def test_a_payment_names_the_payee_and_never_a_hint(lang, payee, unknown):
    asked = _readbacks("ShopPayOrder", lang)
    spoken = [r.spoken(lang) for r in asked]
    assert not any("optional" in s or "选填" in s for s in spoken), spoken
    checkout = [r for r in asked if r.app in ("Shop", "商城") and str(r.category) == "payment"]
    assert checkout and checkout[0].to_whom == "" and unknown in checkout[0].spoken(lang)
    wallet = [r for r in asked if r.app in ("Wallet", "钱包")]
    assert wallet and wallet[0].to_whom == payee, [r.to_whom for r in asked]
    assert "Pay Shop" not in wallet[0].spoken(lang) and "向商城付款" not in wallet[0].spoken(lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_calls_and_messages_name_the_number_or_person_not_the_screen(lang):
    dial = _readbacks("PhoneDialNumber", lang)
    assert dial and dial[0].to_whom == "15732886541" and dial[0].typed == ""
    text = _readbacks("MessagesSendToUnknownNumber", lang)
    assert text and text[0].to_whom == "+1 555 0147"
    share = _readbacks("GalleryPhotoToChat", lang)
    assert share[0].to_whom == "" and share[0].whom_unknown  # the share button: nobody chosen yet
    assert share[-1].to_whom == ("Max Yuan" if lang == "en" else "袁麦克斯")  # the row picked under "Send to…"
    call = _readbacks("PhoneCallContact", lang)
    assert call[0].to_whom.endswith("(150 7354 6246)")


def test_an_empty_field_showing_its_hint_is_never_a_recipient():
    def field(text, rid, cls="android.widget.EditText", top=300):
        return UIElement(bounds=(0, top, 1080, top + 80), text=text, resource_id=f"app:id/{rid}", class_name=cls)

    obs = Observation(width=1080, height=2400, foreground="app", elements=(
        field("ID number (optional)", "id_number"), field("Phone number", "phone_number", top=400),
        field("Enter recipient", "recipient", top=500)))
    assert find_recipient(obs) == ""
    filled = Observation(width=1080, height=2400, foreground="app", elements=(
        field("Max Yuan", "name"), field("138 0000 1234", "phone_number", top=400)))
    assert find_recipient(filled) == "Max Yuan (138 0000 1234)"


# -- endings ------------------------------------------------------------------------------------------


def _run(task_id, lang, answers, *, allowed=None, stop_after=None):
    import threading

    from harness.phoneworld import SimDevice
    from harness.phoneworld.oracle import OraclePolicy
    from harness.phoneworld.tasks import make_world, registry
    from harness.verify import KindRegistry, OutcomeVerifier

    world, params = make_world(task_id, seed=0, language=lang)
    device = SimDevice(world, screenshots=False)
    labels = device.installed_apps()
    ctx = GateContext(allowed_apps=frozenset(labels if allowed is None else allowed), app_labels=labels, lang=lang)
    stop = threading.Event()
    goal = next(t for t in registry.TASKS if t.id == task_id).instruction(params).get(lang)
    gen = run_episode(goal, device=device, policy=OraclePolicy(task_id, 0, world, language=lang),
                      confirmer=ScriptedConfirmer(list(answers)), context=ctx, sleep=lambda s: None, stop=stop,
                      outcome_check=OutcomeVerifier(KindRegistry.load()))
    n = 0
    try:
        while True:
            next(gen)
            n += 1
            if stop_after is not None and n >= stop_after:
                stop.set()
    except StopIteration as done:
        return done.value, world


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_ending_has_its_own_sentence(lang):
    said_no, world = _run("PhoneCallContact", lang, [ConfirmAnswer.NO])
    assert ending_of(said_no) is Ending.DECLINED and not world.sensitive_events
    assert ending_text(said_no).get(lang).startswith(SAY.get("declined", lang))
    silent, _ = _run("PhoneCallContact", lang, [None, None, None, None, None])
    assert ending_of(silent) is Ending.NO_ANSWER
    yes, world = _run("PhoneCallContact", lang, [ConfirmAnswer.YES])
    assert ending_of(yes) is Ending.DONE_CHECKED and world.sensitive_events
    assert ending_text(yes).get(lang).startswith(SAY.get("done_short", lang))
    refused, world = _run("PhoneCallContact", lang, [ConfirmAnswer.YES], allowed=frozenset({"com.android.settings"}))
    assert ending_of(refused) is Ending.REFUSED_CAREGIVER and not world.sensitive_events
    assert ending_text(refused).get(lang).startswith(SAY.get("refused_caregiver", lang))
    stopped, _ = _run("PhoneCallContact", lang, [ConfirmAnswer.YES], stop_after=2)
    assert stopped.outcome is Outcome.STOPPED and ending_of(stopped) is Ending.STOPPED
    texts = [ending_text(r).get(lang) for r in (said_no, silent, yes, refused, stopped)]
    assert len({t.split(".")[0].split("。")[0] for t in texts}) == 5  # each begins its own way
    for text in texts:
        assert not text.startswith(("Done: Done", "完成：完成")) and "stuck" not in text.lower()


def test_no_spoken_loop_message_uses_an_internal_word():
    for key, text in LOOP_MSG.entries.items():
        assert "stuck" not in text.en.lower() and "卡住" not in text.zh, key
    for key in SAY.entries:
        assert SAY.get(key, "en") and SAY.get(key, "zh")


@pytest.mark.parametrize("stop_after_s", [0.1, 0.5, 0.9])
def test_stop_while_the_model_is_thinking_ends_the_run_with_nothing_done(qtbot, stop_after_s):
    """Escape during a slow model (each step takes 0.4 s to think): the step it was thinking about is
    never dispatched, no question opens, and "Stopped" is said."""
    import time

    from app.main_window import AppServices
    from app.runner import start_episode
    from app.strings import tr
    from harness.phoneworld.oracle import OraclePolicy
    from tests.app_fixtures import make_window

    class SlowPolicy:
        def __init__(self, inner):
            self.inner = inner

        def propose(self, goal, observation, history):
            time.sleep(0.4)
            return self.inner.propose(goal, observation, history)

    def starter(request):
        phone = request.connection
        return start_episode(request, policy=SlowPolicy(OraclePolicy("PhoneCallContact", 0, phone.world, language="en")))

    window = make_window(qtbot, task_id="PhoneCallContact", services=AppServices(episode_starter=starter))
    window.submit_request("Call Sophie Tang")
    qtbot.wait(int(stop_after_s * 1000))
    with qtbot.waitSignal(window.run_finished, timeout=30_000):
        window.stop_run()
    assert window._dialog is None and not window.phone.world.sensitive_events
    assert window.conversation.entries[-1].text == tr("stopped_by_user", "en")
