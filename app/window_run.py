"""The main window as the assistant's front end (phonebuddy.assistant.Front) and the run's view: it starts the
run the assistant decided on, on a worker thread (app.workers), renders each loop event (app.events), opens
the confirmation dialog, and tells the assistant each event and the run's end. It decides nothing about what
was heard and records nothing itself: the assistant does both. A part of app.main_window.MainWindow (a mixin).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from app.announce import Cue
from app.confirm_dialog import ConfirmDialog
from app.conversation import EntryKind
from app.events import Presented, present, present_result
from app.failures import describe_failure
from app.runner import EpisodeRequest
from app.strings import tr
from app.window_parts import State
from app.workers import GeneratorWorker, WorkerThread
from assistant_core.types import ConfirmAnswer

log = logging.getLogger(__name__)


class RunPart:
    """The assistant's front end and the run's view (see the module docstring)."""

    def say(self, kind: str | None, text: str, cue: str | None) -> None:
        if kind:
            self.conversation.add(EntryKind(kind), text)
        if cue:
            self.announcer.announce(text, Cue(cue))

    def command(self, command: Any) -> None:
        from assistant_core.session import MetaCommand

        {MetaCommand.STOP: self.stop_run, MetaCommand.REPEAT: self.repeat_last,
         MetaCommand.SLOWER: lambda: self.change_rate(-10), MetaCommand.FASTER: lambda: self.change_rate(+10),
         MetaCommand.HELP: self.show_shortcuts}[command]()

    def confirm(self, answer: ConfirmAnswer) -> None:
        if self._dialog is not None:
            self._dialog.answer_with(answer)

    def reply(self, text: str | None) -> None:
        self.user_bridge.reply(text)

    def elsewhere(self, text: str) -> None:
        handler, self._elsewhere = self._elsewhere, None
        if handler is not None:
            handler(text)

    def start(self, goal: str) -> bool:
        """Start the run for `goal` on a worker thread (the assistant decided to; the starter assembles it
        through the front hall). False (said why) when there is no phone."""
        if self.phone is None:
            self.announcer.announce(tr("sim_phone_offer", self.lang), Cue.ERROR)
            return False
        self._entry(EntryKind.REQUEST, tr("you_said", self.lang, text=goal), record=False)  # the assistant records the goal
        starter = self.services.episode_starter
        if starter is None:
            from app.runner import start_episode

            starter = start_episode
        bridge, user, phone, agent, lang = self.bridge, self.user_bridge, self.phone, self.agent, self.lang
        settings, history, started = self.caregiver_settings, self.services.history, self.assistant.run_started

        progress = self.loading.emit  # a signal: safe to emit from the worker thread (queued to the GUI)

        def factory(stop_event: threading.Event):
            bridge.bind_stop(stop_event)
            user.bind_stop(stop_event)
            return starter(EpisodeRequest(goal, lang, phone, agent, bridge, user, stop_event, settings, history,
                                          progress, started))

        self._saw_finished = False
        worker = GeneratorWorker(factory)
        worker.event.connect(self._on_agent_event)
        worker.finished.connect(self._on_agent_finished)
        worker.failed.connect(self._on_agent_failed)
        worker.stopped.connect(self._on_agent_stopped)
        self._run = WorkerThread(worker)
        self._run.ended.connect(self._on_thread_ended)
        self._set_state(State.WORKING)
        self.announcer.announce(tr("started", self.lang, text=goal), Cue.WORKING)
        self.request_started.emit(goal)
        self._run.start()
        return True

    def stop_run(self) -> None:
        """Escape / F4 / a spoken "stop": stop speaking, close a pending question (its answer is no),
        and end the run. The stop flag is raised first, so whatever the worker is doing (observing,
        thinking, gating, asking, about to dispatch) it checks the flag before anything else reaches
        the phone, and a question it had already queued never opens."""
        self.announcer.stop()
        self.assistant.read_back = None
        if self._run is None:
            return
        self._run.stop()
        if self._dialog is not None:
            dialog, self._dialog = self._dialog, None
            dialog.close_quietly()
            dialog.deleteLater()
        self.bridge.answer(ConfirmAnswer.NO)
        if self.user_bridge.pending:
            self.user_bridge.reply(None)

    def stopping(self) -> bool:
        """A run is on and the user has asked it to stop (it ends at its next check)."""
        return self._run is not None and self._run.worker.stop_event.is_set()

    def _show(self, p: Presented | None) -> None:
        """Render one of the run's events (app.events); the assistant records them."""
        if p is None:
            return
        if p.kind is not None and p.text:
            self._entry(p.kind, p.text, record=False)
            if p.speak:
                self.announcer.announce(p.text, p.cue)
        if p.closes_question and self._dialog is not None:
            dialog, self._dialog = self._dialog, None
            dialog.close_quietly()
            dialog.deleteLater()
            self._set_state(State.WORKING)
        if p.frame is not None:
            self.show_frame(p.frame)
        elif p.refresh_mirror:
            self.refresh_mirror()

    def _on_agent_event(self, event: object) -> None:
        from assistant_core.events import Finished, Observed

        if isinstance(event, Finished):
            self._saw_finished = True
        if not isinstance(event, Observed):
            self.events_seen.append(event)
        self.assistant.on_event(event)
        self._show(present(event, self.lang))
        self.pin_pad.on_event(event)
        if self.state == State.WORKING:
            self.thinking_cue.start()  # each loop event restarts the wait: the cue marks long silences only

    def _on_agent_finished(self, result: object) -> None:
        closing = present_result(result, self.lang) if not self._saw_finished else None
        self._show(closing)
        self.assistant.ended(closing.text if closing is not None else "")
        self.refresh_mirror()
        self._end_run(result)

    def _on_agent_failed(self, exc: object) -> None:
        line = tr("error", self.lang, text=describe_failure(exc, self.lang))
        self._show(Presented(EntryKind.ERROR, line, Cue.ERROR))
        self.assistant.ended(line, kind=str(EntryKind.ERROR))
        self.refresh_mirror()
        self._end_run(exc)

    def _on_agent_stopped(self) -> None:
        self._show(Presented(EntryKind.RESULT, tr("stopped_by_user", self.lang), Cue.INFO))
        self.assistant.ended(stopped=True)
        self.refresh_mirror()
        self._end_run(None)

    def _end_run(self, result: object) -> None:
        self._set_state(State.IDLE)
        self.last_result = result
        self.run_finished.emit(result)

    def _on_thread_ended(self) -> None:
        if self._run is not None:
            self._run.wait(1000)
        self._run = None

    def _on_confirm_requested(self, request: object) -> None:
        from app.runner import prompt_from_request

        if self._dialog is not None:
            return  # the loop asks again after a reminder or a re-reading: the dialog is still open
        if self._run is None or self.stopping():
            return  # stop came first: the question was queued before the worker saw it; never show it
        make_prompt = self.services.prompt_from_request or prompt_from_request
        prompt = make_prompt(request, self.lang)
        dialog = ConfirmDialog(prompt, lang=self.lang, announce=self.announcer.announce,
                               timeout_s=self.services.confirm_timeout_s,
                               on_repeat=lambda: self.bridge.answer(ConfirmAnswer.REPEAT), on_stop=self.stop_run,
                               parent=self)
        dialog.answered.connect(self._on_confirm_answered)
        dialog.voice_requested.connect(self._listen_for_answer)
        dialog.voice_hold.connect(lambda down: self.start_listening() if down else self.stop_listening())
        self._dialog = dialog
        self._set_state(State.WAITING)
        self.refresh_mirror()
        dialog.start()

    def _on_loading(self, report: object) -> None:
        """The model is loading (first step after start): say each stage once, show it in the status."""
        message = getattr(report, "message", None)
        text = message.get(self.lang) if hasattr(message, "get") else str(report)
        fraction = float(getattr(report, "fraction", 0.0))
        line = f"{text} {round(100 * fraction)}%" if 0.0 < fraction < 1.0 else text
        self._entry(EntryKind.NOTE, line)
        self.announcer.announce(line, Cue.WORKING)

    def _on_user_asked(self, question: object) -> None:
        """The loop asked a free question (its Paused event already announced it): focus the box."""
        self._set_state(State.WAITING)
        (self.pin_pad if self.pin_pad.isVisible() else self.request_box).setFocus()

    def _listen_for_answer(self) -> None:
        if self.state == State.LISTENING:
            self.stop_listening()
        else:
            self.start_listening()

    def _on_confirm_answered(self, answer: ConfirmAnswer) -> None:
        dialog, self._dialog = self._dialog, None
        if dialog is not None:
            dialog.deleteLater()
        self.bridge.answer(answer)
        if self.is_running():
            self._set_state(State.WORKING)
