"""Policy errors that carry a bilingual message for the user (still `PolicyUnavailableError`s)."""

from __future__ import annotations

from assistant_core.errors import PolicyUnavailableError
from assistant_core.i18n import Catalog, Text

MESSAGES = Catalog("policy", {
    "no_weights": ("The model {title} is not on this computer (looked in {where}). Download it with "
        "`phonebuddy models download {name}`, or choose a folder that holds it in Settings."),
    "offline": ("The model {title} is not downloaded yet and there is no internet connection. Connect to the internet "
        "and run `phonebuddy models download {name}`, or copy the model folder here and choose it in Settings."),
    "bad_folder": "The folder {where} does not hold a usable model ({detail}).",
    "no_space": "Not enough free disk space for {title}: it needs about {need:.1f} GB, {free:.1f} GB are free in {where}.",
    "download_failed": "Downloading {title} stopped: {reason}. What is already downloaded is kept; {again} to continue.",
    "no_internet": ("I can't reach the internet to download {title}. Check the connection, then {again}; what is already "
        "downloaded is kept."),
    "offline_download": ("{title} is not downloaded yet, and this computer is set to stay offline (HF_HUB_OFFLINE). Connect to the "
        "internet, turn that setting off, then {again}; or copy the model folder here and choose it in Settings."),
    "reason_server": "the model site answered with an error",
    "reason_not_found": "the model site does not have this model",
    "reason_disk": "the files could not be written to this computer's disk",
    "reason_other": "the download was interrupted",
    "no_gpu": "{quant} needs a CUDA graphics card, and none was found. On this computer use fp32 or nf4.",
    "out_of_memory": "The model does not fit in memory ({detail}). Try the 4-bit setting, a smaller model, or a server.",
    "load_failed": "The model could not be loaded: {detail}",
    "server_unreachable": ("The model server at {url} cannot be reached ({detail}). Check that it is running and the address in "
        "Settings is right."),
    "server_error": "The model server at {url} answered with an error: {detail}",
    "server_auth": "The model server at {url} refused the API key ({detail}). Check the key in Settings.",
    "server_redirect": ("The model server at {url} tried to send the request to another address ({target}). Nothing was sent "
        "there. If the server really moved, put its new address in Settings."),
    "server_slow": "The model server at {url} did not answer within {seconds:.0f} seconds ({detail}). The step was stopped.",
    "server_too_big": "The model server at {url} sent a reply larger than {limit_mb:.0f} MB; it was not read to the end.",
    "server_tls": "The secure connection to the model server at {url} could not be verified ({detail}). Nothing was sent.",
    "not_local": "{title} can only run on a server; set a server address for it in Settings.",
    "loading": "Loading the model…",
    "loading_processor": "Reading the tokenizer and image settings…",
    "loading_weights": "Loading the model weights ({quant}, {device})…",
    "loading_adapter": "Loading your personalization…",
    "ready": "The model is ready.",
    "thinking": "Thinking…",
})


class PolicyUnavailable(PolicyUnavailableError):
    """A PolicyUnavailableError with a message in both languages (`message`); str() is the English."""

    def __init__(self, message: Text, *, detail: str = ""):
        self.message = message
        self.detail = detail
        super().__init__(message.en)


def unavailable(key: str, **values: object) -> PolicyUnavailable:
    return PolicyUnavailable(MESSAGES[key].format(**values), detail=str(values.get("detail", "")))
