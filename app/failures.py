"""Why something failed, in plain words for the user: `describe_failure(exc, lang)` (never an exception
class name, errno text, a traceback or a path: those go to the log), the failure sentences by kind, and
`speakable(text)`. Used by the window, the loop's events as shown (app.events), the runner and the wizard.
"""

from __future__ import annotations

import logging
import re

from app.agent import AgentUnavailableError
from assistant_core.i18n import Text
from assistant_core.types import DeviceError

log = logging.getLogger(__name__)

FAILURES = {
    "offline": Text("PhoneBuddy could not reach the internet or the server. Check the connection, then try again."),
    "missing": Text("A file PhoneBuddy needs is missing on this computer. Open the setup in the caregiver settings (F12) and download the models again."),
    "denied": Text("PhoneBuddy is not allowed to read or write a file it needs. Ask the person who set up this computer to check its permissions."),
    "disk_full": Text("The computer's disk is full. Free some space, then try again."),
    "timeout": Text("That took too long to answer. Please try again."),
    "memory": Text("This computer ran out of memory. Close other programs, then try again."),
    "internal": Text("Something went wrong inside PhoneBuddy. The details are in its log; please try again."),
}
MODEL_UNAVAILABLE = Text("The assistant's model is not available on this computer. Open the caregiver settings (F12) to download it or to set a model server.")
STEP_FAILED = Text("That step did not work on the phone.")
DOWNLOAD_ADVICE = Text("Press Download again: it continues where it stopped.")

# Words that must never be spoken: exception class names, errno text, tracebacks, file paths.
_UNSPEAKABLE = re.compile(r"\b[A-Z][A-Za-z]+(?:Error|Exception)\b|\[?Errno\s*-?\d+\]?|Traceback|(?:^|\s)/[\w.-]+/[\w./-]+|[A-Za-z]:\\\S+")


def _kind_of_failure(exc: BaseException) -> str:
    import errno
    import socket

    names = " ".join(cls.__name__ for cls in type(exc).__mro__)
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, TimeoutError) or "Timeout" in names:
        return "timeout"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return "disk_full"
    if isinstance(exc, PermissionError):
        return "denied"
    if "EntryNotFound" in names or "RepositoryNotFound" in names or isinstance(exc, FileNotFoundError):
        return "missing"
    if isinstance(exc, ConnectionError | socket.gaierror) or any(
            word in names for word in ("ConnectionError", "ConnectError", "OfflineMode", "HTTPError", "ProxyError")):
        return "offline"
    return "internal"


def speakable(text: str) -> bool:
    """False when `text` holds an exception class name, errno text, a traceback or a file path."""
    return _UNSPEAKABLE.search(text) is None


def describe_failure(exc: object, lang: str, *, download: bool = False) -> str:
    """A sentence for the user about why something failed, in plain words with what to do: the error's
    own bilingual message when it has one, else the kind of failure; never an exception class name or
    errno text (those go to the log). `download`: add how to resume a download."""
    said = ""
    if isinstance(exc, AgentUnavailableError):
        said = exc.text.get(lang)
    elif isinstance(exc, DeviceError):
        said = exc.message.get(lang)
    else:
        for attr in ("text", "message"):
            value = getattr(exc, attr, None)
            if isinstance(value, Text):
                said = value.get(lang)
                break
    if not said or not speakable(said):
        if isinstance(exc, BaseException):
            log.info("described to the user as plain words: %r", exc)
            kind = _kind_of_failure(exc)
            if download and kind == "missing":
                kind = "offline"  # a download that finds nothing, offline, is a connection problem
            said = FAILURES[kind].get(lang)
        else:
            said = FAILURES["internal"].get(lang)
    if download:
        said = f"{said} {DOWNLOAD_ADVICE.get(lang)}" if lang != "zh" else f"{said}{DOWNLOAD_ADVICE.get(lang)}"
    return said
