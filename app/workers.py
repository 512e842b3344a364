"""Qt without freezing: background work whose results come back to the GUI thread as signals.

- `GeneratorWorker` runs a generator (the agent loop) on a worker thread and emits each yielded event as
  `event(object)`, then `finished(object)` with the generator's return value, or `failed(object)` with
  the exception. Stopping is cooperative: `stop()` sets a `threading.Event` the generator factory was
  given and closes the generator at the next yield. The worker never touches a widget.
- `ConfirmBridge` / `UserBridge` let the loop on the worker thread ask the user: `ask()` / `ask_user()`
  emit a signal (queued onto the GUI thread) and block the worker until the GUI answers, the run is
  stopped, or the timeout passes (None comes back: the loop then reminds, and no answer means no).
- `BackgroundOp` is a one-shot QueryOp: run a function on a Python thread, get `done(result)` or
  `failed(exception)` back on it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal, Slot

from assistant_core.types import ConfirmAnswer

log = logging.getLogger(__name__)

GeneratorFactory = Callable[[threading.Event], Generator[Any, Any, Any]]


class GeneratorWorker(QObject):
    """Turns each `yield` of a background generator into a signal on the GUI thread.

    The object lives on the GUI thread; `run()` is called on a worker thread (WorkerThread), and every
    signal it emits there is queued to the GUI-thread receivers."""

    event = Signal(object)
    finished = Signal(object)
    failed = Signal(object)
    stopped = Signal()

    def __init__(self, factory: GeneratorFactory):
        super().__init__()
        self._factory = factory
        self.stop_event = threading.Event()

    def stop(self) -> None:
        """Ask the generator to end; safe from any thread."""
        self.stop_event.set()

    def run(self) -> None:
        try:
            gen = self._factory(self.stop_event)
            while True:
                if self.stop_event.is_set():
                    gen.close()
                    self.stopped.emit()
                    return
                try:
                    item = next(gen)
                except StopIteration as done:
                    self.finished.emit(done.value)
                    return
                self.event.emit(item)
        except Exception as exc:  # every failure is reported to the GUI, never swallowed
            log.exception("background run failed")
            self.failed.emit(exc)


class WorkerThread(QObject):
    """Runs one GeneratorWorker on a Python thread; `ended` (GUI thread) once it has returned.

    A plain thread rather than a QThread: nothing Qt lives on it, so no Qt object is ever created,
    timed or destroyed off the GUI thread."""

    ended = Signal()

    def __init__(self, worker: GeneratorWorker, parent: QObject | None = None):
        super().__init__(parent)
        self.worker = worker
        self._thread = threading.Thread(target=self._main, name="agent-worker", daemon=True)

    def _main(self) -> None:
        try:
            self.worker.run()
        finally:
            self.ended.emit()

    def start(self) -> None:
        self._thread.start()

    def is_running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, ms: int = 5000) -> bool:
        """Join the thread; True when it has ended."""
        if self._thread.ident is None:
            return True
        self._thread.join(ms / 1000)
        return not self._thread.is_alive()

    def stop(self, wait_ms: int = 0) -> bool:
        self.worker.stop()
        return self.wait(wait_ms) if wait_ms else True


class _Waiter:
    """One blocking wait on the worker thread for a value the GUI thread provides."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._value: Any = None
        self._stop: threading.Event | None = None

    def bind_stop(self, stop_event: threading.Event | None) -> None:
        self._stop = stop_event

    def begin(self) -> None:
        self._ready.clear()
        self._value = None

    def wait(self, timeout_s: float | None) -> Any:
        """The value, or None on timeout (None: no limit) or when the run is stopped."""
        waited = 0.0
        while timeout_s is None or waited < timeout_s:
            if self._ready.wait(0.05):
                return self._value
            if self._stop is not None and self._stop.is_set():
                return None
            waited += 0.05
        return None

    def give(self, value: Any) -> None:
        self._value = value
        self._ready.set()


class ConfirmBridge(QObject):
    """assistant_core.confirm.Confirmer for the GUI: the worker thread's `ask()` emits `requested`
    (queued onto the GUI thread, which opens the dialog) and blocks until `answer()` is called, the run
    is stopped, or `timeout_s` passes (then None: the loop reminds, and in the end counts it as no)."""

    requested = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._waiter = _Waiter()
        self.asked = 0

    def bind_stop(self, stop_event: threading.Event | None) -> None:
        self._waiter.bind_stop(stop_event)

    def ask(self, request: Any, *, timeout_s: float | None = None) -> ConfirmAnswer | None:
        self._waiter.begin()
        self.asked += 1
        self.requested.emit(request)
        answer = self._waiter.wait(timeout_s)
        return None if answer is None else ConfirmAnswer(answer)

    def answer(self, answer: ConfirmAnswer) -> None:
        """Called on the GUI thread with the user's answer."""
        self._waiter.give(ConfirmAnswer(answer))


class UserBridge(QObject):
    """assistant_core.loop.UserChannel for the GUI: a free question (call_user, loop guard, hand-over)
    is shown by the window through `asked`; the next typed or spoken text is the `reply()`."""

    asked = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._waiter = _Waiter()
        self.pending = False

    def bind_stop(self, stop_event: threading.Event | None) -> None:
        self._waiter.bind_stop(stop_event)

    def ask_user(self, question: Any, *, timeout_s: float | None = None) -> str | None:
        self._waiter.begin()
        self.pending = True
        self.asked.emit(question)
        try:
            return self._waiter.wait(timeout_s)
        finally:
            self.pending = False

    def reply(self, text: str | None) -> None:
        self._waiter.give(text)


# Background ops in flight: each is held here from start() until its result has been handed over on
# the GUI thread, so an op whose caller kept no reference is never collected half-way.
_RUNNING: set[BackgroundOp] = set()


class BackgroundOp(QObject):
    """Run `fn` on a Python thread; `on_done(result)` / `on_failed(exc)` run on the GUI thread.

    The results come back through this object's own signals, queued to its GUI-thread slots, so a
    plain Python callable is never invoked on the worker thread.
    """

    done = Signal(object)
    failed = Signal(object)
    _result = Signal(object)
    _error = Signal(object)

    def __init__(
        self,
        fn: Callable[[], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_failed: Callable[[BaseException], None] | None = None,
        parent: QObject | None = None,
    ):
        # `parent` is the owner whose callbacks these are, not a Qt parent: a Qt parent would delete this
        # object while its thread runs. Once the owner is gone, the callbacks are skipped.
        super().__init__()
        self._owner = parent
        self._fn = fn
        self._on_done = on_done
        self._on_failed = on_failed
        self._thread = threading.Thread(target=self._main, name="background-op", daemon=True)
        self._result.connect(self._relay_done, Qt.ConnectionType.QueuedConnection)
        self._error.connect(self._relay_failed, Qt.ConnectionType.QueuedConnection)

    def _main(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # reported through `failed`
            log.exception("background op failed")
            self._error.emit(exc)
        else:
            self._result.emit(result)

    def start(self) -> BackgroundOp:
        _RUNNING.add(self)
        self._thread.start()
        return self

    def wait(self, ms: int = 5000) -> bool:
        if self._thread.ident is None:
            return True
        self._thread.join(ms / 1000)
        return not self._thread.is_alive()

    def is_running(self) -> bool:
        return self._thread.is_alive()

    def _finish(self) -> None:
        self._thread.join(2.0)  # it has emitted and is returning; joining drops its last reference here
        _RUNNING.discard(self)

    def _owner_alive(self) -> bool:
        return self._owner is None or shiboken6.isValid(self._owner)

    @Slot(object)
    def _relay_done(self, result: Any) -> None:
        try:
            if self._on_done is not None and self._owner_alive():
                self._on_done(result)
            self.done.emit(result)
        finally:
            self._finish()

    @Slot(object)
    def _relay_failed(self, exc: BaseException) -> None:
        try:
            if self._on_failed is not None and self._owner_alive():
                self._on_failed(exc)
            self.failed.emit(exc)
        finally:
            self._finish()
