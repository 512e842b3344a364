"""The Listener end to end: a WAV file played in real time in place of a microphone, push-to-talk in toggle
mode, end-pointing after 0.7 s of silence, and the real Whisper base model."""

from __future__ import annotations

import numpy as np
from speech_fixtures import base_transcriber, espeak_clip, save, wer

from speech.audio import PttMode, WavFileSource
from speech.listener import Listener


def test_toggle_listening_ends_on_silence_and_transcribes():
    clip = espeak_clip("Open the camera")
    path = save("listener.wav", clip)
    voiced = np.flatnonzero(np.abs(clip) > 0.02)
    speech_end_s = voiced[-1] / 16_000
    source = WavFileSource(path, realtime=True, tail_silence_s=1.5)
    listener = Listener(base_transcriber(), mode=PttMode.TOGGLE, language="en", microphone_factory=lambda: source)
    listener.open()
    try:
        listener.press()
        heard = listener.next_transcript(timeout=15)
    finally:
        listener.close()
    assert heard is not None and heard.ended_by == "silence"
    captured_s = heard.transcript.timings.audio_s
    # Capture ended about 0.7 s after the speech did (30 ms frames), well before the file's 1.5 s of
    # trailing silence ran out.
    assert speech_end_s + 0.6 < captured_s < speech_end_s + 0.9, (speech_end_s, captured_s)
    assert wer("open the camera", heard.transcript.text) <= 0.25, heard.transcript.text
    assert heard.latency_s > 0


def test_hold_mode_and_direct_audio():
    listener = Listener(base_transcriber(), mode=PttMode.HOLD, language="en")
    clip = espeak_clip("Go back")
    assert wer("go back", listener.transcribe_audio(clip, 16_000).text) <= 0.5
    listener.press()
    listener.ptt.feed(clip)
    listener.release()
    heard = listener.next_transcript(timeout=10)
    assert heard is not None and heard.ended_by == "released"
    assert wer("go back", heard.transcript.text) <= 0.5, heard.transcript.text


def test_stop_words_in_both_languages():
    from speech.asr import Transcript, TranscriptStatus
    from speech.listener import is_stop_command

    def t(text):
        return Transcript(text, "en", 1.0, 0.9, -0.1, 0.0, TranscriptStatus.OK)

    assert all(is_stop_command(t(x)) for x in ("Stop.", "stop talking!", "停！", "别说了。", "Be quiet"))
    assert not any(is_stop_command(t(x)) for x in ("", "Stop the music app and open Settings", "停车场在哪里"))


def test_spoken_stop_is_recognised():
    from speech.listener import is_stop_command

    heard = Listener(base_transcriber(), language="en").transcribe_audio(espeak_clip("Stop talking"))
    assert is_stop_command(heard), heard.text
