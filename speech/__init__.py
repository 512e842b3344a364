"""Speech for PhoneBuddy: listening (faster-whisper), speaking (piper, espeak-ng fallback) and earcons.

Public API (names load lazily, so `import speech` is cheap):

Listening
    transcriber = FasterWhisperTranscriber(AsrSettings(model="base", language=None), locator=ModelLocator())
    transcriber.load()                                    # optional, on a worker thread; else on first use
    t = transcriber.transcribe(samples_16k_mono, language="zh", hotwords=["微信", "Anna"])
    t.text, t.language, t.confidence, t.status            # status: OK / CONFIRM / REPEAT
    t.needs_repeat, t.should_confirm, t.prompt_for_user("zh")
    transcribe_file(transcriber, "command.wav")           # any rate / channels, resampled to 16 kHz
    PushToTalk(Microphone(), mode=PttMode.HOLD)           # microphone + push-to-talk + end-pointing (app/voice.py)

Speaking
    router = default_router(zh_voice="female")          # Kokoro zh ("female"/"male"), piper en, espeak-ng last
    router.set_voice("zh", "male")                        # the Chinese voice setting, from the next sentence
    speaker = Speaker(router, SoundDeviceSink(22050))     # or any AudioSink (MemorySink in tests)
    speaker.say("Opening Settings.", lang="en"); speaker.say("正在打开设置。")
    speaker.stop(); speaker.repeat_last(); speaker.rate = 1.2; speaker.volume = 0.8
    speak_to_array(router, "Hello.")                      # whole utterance as one array (for files)

Earcons
    earcon_audio("listening", 22050); play_earcon("success", sink); WorkingTicker(sink).start() / .stop()

Models
    ModelLocator(cache_dir=..., explicit_dir=..., allow_download=True, progress=callback).whisper("base")
    ModelLocator().piper_voice("zh_CN-huayan-medium")
    ModelLocator().kokoro("zm_yunxi")                     # Kokoro-82M int8 + a voice (wheels, hash checked, or hub)

Text front end
    textnorm.normalize("验证码是482913", "zh")            # '验证码是四八二，九一三': what every voice is given
    textnorm.spoken_digits("one three 八")               # '138': digits heard, for read-back checks

Errors carry bilingual text (`error.text.get("zh")`): ModelMissingError, AudioDeviceError,
AudioFileError, VoiceUnavailableError, all SpeechError.
"""

from __future__ import annotations

import importlib

_EXPORTS: dict[str, str] = {
    "AsrSettings": "speech.asr",
    "FasterWhisperTranscriber": "speech.asr",
    "Transcriber": "speech.asr",
    "Transcript": "speech.asr",
    "TranscriptStatus": "speech.asr",
    "transcribe_file": "speech.asr",
    "PttMode": "speech.audio",
    "PushToTalk": "speech.audio",
    "Microphone": "speech.audio",
    "WavFileSource": "speech.audio",
    "AudioSink": "speech.audio",
    "MemorySink": "speech.audio",
    "SoundDeviceSink": "speech.audio",
    "EnergyEndpointer": "speech.audio",
    "read_wav": "speech.audio",
    "write_wav": "speech.audio",
    "Speaker": "speech.tts",
    "VoiceRouter": "speech.tts",
    "PiperEngine": "speech.tts",
    "EspeakEngine": "speech.tts",
    "speak_to_array": "speech.tts",
    "default_router": "speech.tts",
    "KokoroEngine": "speech.kokoro",
    "split_sentences": "speech.tts",
    "Earcon": "speech.earcons",
    "earcon_audio": "speech.earcons",
    "WorkingTicker": "speech.earcons",
    "ModelLocator": "speech.models",
    "SpeechError": "speech.messages",
    "ModelMissingError": "speech.messages",
    "AudioDeviceError": "speech.messages",
    "AudioFileError": "speech.messages",
    "VoiceUnavailableError": "speech.messages",
}

__all__ = [*_EXPORTS, "play_earcon"]


def __getattr__(name: str):
    if name == "play_earcon":
        from speech.earcons import play

        return play
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'speech' has no attribute {name!r}")
