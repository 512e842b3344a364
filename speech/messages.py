"""Every user-facing speech message, in English and Chinese, and the errors that carry them.

An error raised by the speech package carries a `Text` (both languages), so the app can show or speak it in
the user's language; `str(error)` is the English text (for logs and the CLI).
"""

from __future__ import annotations

from assistant_core.i18n import Catalog, Text

MESSAGES = Catalog(
    "speech",
    {
        "model_missing": ("The speech model '{name}' is not on this computer. Looked in: {places}. Connect to the internet "
            "once so it can be downloaded, or copy it into {cache}."),
        "model_offline": ("I can't reach the internet to download the speech model '{name}'. Check the connection, then {again}; "
            "what is already downloaded is kept."),
        "model_no_downloader": ("The speech model '{name}' must be downloaded, but this installation has no download part. Reinstall "
            "PhoneBuddy with its speech part, or copy the model onto this computer."),
        "model_size_mismatch": ("The speech model file {path} is damaged or incomplete ({got} bytes, expected {want}). "
            "It will be downloaded or rebuilt again."),
        "model_hash_mismatch": ("The speech model file {path} does not match its published checksum (sha256 {got}, expected {want}), "
            "so it is not used."),
        "model_unknown": "Unknown speech model '{name}'. Choose one of: {choices}.",
        "model_load_failed": ("The speech model in {path} could not be loaded: it may be damaged or incomplete. Download it again "
            "from the setup (caregiver settings, F12)."),
        "no_microphone": "No microphone was found. Plug one in, or choose a WAV file to listen to instead.",
        "no_speaker_device": ("No speaker or headphones were found, so nothing can be played. Use --out FILE.wav to save the "
            "speech to a file."),
        "audio_device_failed": "The audio device could not be opened: {reason}",
        "audio_library_missing": "The audio library PortAudio is not installed (on Debian or Ubuntu: apt-get install libportaudio2).",
        "wav_unreadable": "The audio file {path} cannot be read: {reason}",
        "wav_clipped": "The recording is too loud (distorted); speak a little further from the microphone.",
        "not_heard": "Sorry, I did not catch that. Please say it again.",
        "not_sure": "I am not sure I heard you right. Did you say: {text}?",
        "voice_missing": "The {language} voice is not installed, so I will read this with the voice I have.",
        "voice_unavailable": "No voice for speech output could be found: {reason}",
        "lang_en": "English",
        "lang_zh": "Chinese",
        "download_progress": "Downloading speech model {name}: {done} of {total} MB",
    },
)


class SpeechError(RuntimeError):
    """A speech problem the user or caregiver can act on. `text` holds the message in both languages."""

    def __init__(self, text: Text):
        self.text = text
        super().__init__(text.en)


class ModelMissingError(SpeechError):
    """A model is not on disk and cannot be fetched (offline, unknown name, damaged download)."""


class AudioDeviceError(SpeechError):
    """No microphone or speaker, or the audio system refused to open one."""


class AudioFileError(SpeechError):
    """A WAV (or other audio) file that cannot be read."""


class VoiceUnavailableError(SpeechError):
    """No text-to-speech voice at all (neither piper nor espeak-ng)."""
