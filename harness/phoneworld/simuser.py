"""The phone's owner, simulated, for runs on the simulated phone: `SimulatedUser` takes the phone at a
hand-over (the Wallet's payment PIN, the lock screen); `ScriptedUser` also answers free questions from a
script (MobileWorld's scripted user) and says "I don't know" to the rest.

Below the oracle and the tasks (the held-out ask-user tasks build their `ScriptedUser` here), so neither
imports the other (tests/test_import_cycles.py). `harness.phoneworld.oracle` re-exports both.
"""

from __future__ import annotations

from typing import Any

from assistant_core.i18n import Text

WALLET = "com.phoneworld.wallet"


class SimulatedUser:
    """A UserChannel (assistant_core.loop) that plays the phone's owner at a hand-over, in-process: on
    the Wallet's secure PIN screen it types the PIN with its own taps and answers "done"; on the lock
    screen it swipes up and answers "done". Any other question gets no answer (None), which ends the
    run, as a user who walks away would. `taps` counts what it did, for tests."""

    def __init__(self, world: Any):
        self.world = world
        self.taps = 0
        self.questions: list[Text] = []

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        self.questions.append(question)
        world = self.world
        if world.locked:
            world.swipe(540, 2000, 540, 600, 300)
            return "done"
        keys = {e.text: e for e in world.elements() if e.resource_id == f"{WALLET}:id/pin_key"}
        if not keys:
            return None
        for digit in world.wallet.pin:
            x, y = keys[digit].center
            world.tap(x, y)
            self.taps += 1
        return "done"


DONT_KNOW = Text("I don't know; please do what I asked.")


class ScriptedUser(SimulatedUser):
    """The phone's owner with a script (MobileWorld's scripted user): `script` is ((keywords...),
    answer) pairs. A question that touches a topic of the script gets that answer; any other free
    question gets "I don't know; please do what I asked." in the run's language; the user never makes
    anything up. At a hand-over (the payment PIN, the lock screen) it takes the phone as SimulatedUser.
    `questions` and `answers` keep what was asked and said."""

    def __init__(self, world: Any, script: tuple[tuple[tuple[str, ...], Text], ...] = (), lang: str = "en"):
        super().__init__(world)
        self.script = script
        self.lang = lang
        self.answers: list[str] = []

    def ask_user(self, question: Text, *, timeout_s: float | None = None) -> str | None:
        words = f"{question.en} {question.zh}".lower()
        for keywords, answer in self.script:
            if any(k.lower() in words for k in keywords):
                self.questions.append(question)
                self.answers.append(answer.get(self.lang))
                return self.answers[-1]
        if self.world.locked or any(e.resource_id == f"{WALLET}:id/pin_key" for e in self.world.elements()):
            return super().ask_user(question, timeout_s=timeout_s)
        self.questions.append(question)
        self.answers.append(DONT_KNOW.get(self.lang))
        return self.answers[-1]
