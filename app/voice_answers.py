"""A spoken answer to the confirmation dialog: yes / no / repeat, recognised by the session's
meta-command parser (assistant_core.session.parse_meta), so the window and the loop agree on what
"确认", "不要" or "say that again" mean."""

from __future__ import annotations

from assistant_core.session import MetaCommand, parse_meta
from assistant_core.types import ConfirmAnswer

_ANSWERS = {
    MetaCommand.YES: ConfirmAnswer.YES,
    MetaCommand.NO: ConfirmAnswer.NO,
    MetaCommand.STOP: ConfirmAnswer.NO,
    MetaCommand.REPEAT: ConfirmAnswer.REPEAT,
}


def parse_answer(utterance: str, lang: str = "en") -> ConfirmAnswer | None:
    """YES, NO or REPEAT for a whole-utterance answer; None for anything else (ask again)."""
    command = parse_meta(utterance)
    return None if command is None else _ANSWERS.get(command)
