"""Audio in and out without hardware: WAV reading (rates, channels, widths, clipping, bad files), the
resampler, end-pointing, push-to-talk, the real PortAudio device check, chunked playback, and earcons."""

from __future__ import annotations

import threading
import time
import wave

import numpy as np
import pytest

from speech.audio import (
    ASR_RATE,
    EndpointEvent,
    EnergyEndpointer,
    MemorySink,
    Microphone,
    PttMode,
    PushToTalk,
    SoundDeviceSink,
    blocks_of,
    has_speech,
    play_chunked,
    read_wav,
    resample,
    write_wav,
)
from speech.earcons import NOTES, PEAK, Earcon, WorkingTicker, earcon_audio, play
from speech.messages import AudioDeviceError, AudioFileError


def tone(freq: float, seconds: float, rate: int = ASR_RATE, level: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (level * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.argmax(spectrum) * rate / len(samples))


def write_pcm(path, data: np.ndarray, rate: int, width: int, channels: int = 1):
    frames = data.reshape(-1, channels) if channels > 1 else data
    if width == 1:
        raw = np.clip(frames * 127 + 128, 0, 255).astype(np.uint8).tobytes()
    elif width == 2:
        raw = (np.clip(frames, -1, 1) * 32767).astype("<i2").tobytes()
    elif width == 3:
        ints = (np.clip(frames, -1, 1) * (2**23 - 1)).astype("<i4").reshape(-1)
        raw = b"".join(int(v).to_bytes(3, "little", signed=True) for v in ints)
    else:
        raw = (np.clip(frames, -1, 1) * (2**31 - 1)).astype("<i4").tobytes()
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(raw)
    return path


# ----- reading and resampling ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("rate", "width"), [(8_000, 1), (22_050, 2), (44_100, 3), (48_000, 4), (16_000, 2)])
def test_any_pcm_wav_becomes_16k_mono_with_pitch_and_length_kept(tmp_path, rate, width):
    path = write_pcm(tmp_path / "a.wav", tone(440.0, 1.0, rate), rate, width)
    loaded = read_wav(path)
    assert loaded.sample_rate == ASR_RATE and loaded.source_rate == rate and loaded.samples.dtype == np.float32
    assert abs(len(loaded.samples) - ASR_RATE) <= 1
    assert peak_hz(loaded.samples, ASR_RATE) == pytest.approx(440.0, abs=2.0)
    assert np.max(np.abs(loaded.samples)) == pytest.approx(0.3, abs=0.03)
    assert not loaded.clipped


def test_stereo_is_mixed_to_mono(tmp_path):
    left, right = tone(300.0, 0.5, 16_000), np.zeros(8_000, np.float32)
    path = write_pcm(tmp_path / "s.wav", np.stack([left, right], axis=1), 16_000, 2, channels=2)
    loaded = read_wav(path)
    assert loaded.source_channels == 2 and loaded.samples.ndim == 1
    assert np.max(np.abs(loaded.samples)) == pytest.approx(0.15, abs=0.01)


def test_downsampling_removes_frequencies_above_the_new_nyquist():
    high = tone(10_000.0, 0.5, 44_100)  # above 8 kHz: must vanish, not fold down to 6 kHz
    out = resample(high, 44_100, 16_000)
    assert np.sqrt(np.mean(out**2)) < 0.01


def test_clipped_file_is_measured(tmp_path):
    loud = np.clip(tone(200.0, 1.0) * 6, -1, 1)
    loaded = read_wav(write_pcm(tmp_path / "c.wav", loud, 16_000, 2))
    assert loaded.clipped and loaded.clipped_fraction > 0.3


def test_float_wav_is_read_through_pyav(tmp_path):
    import av

    path = tmp_path / "f.wav"
    samples = tone(500.0, 0.5, 24_000)
    with av.open(str(path), "w", format="wav") as out:
        stream = out.add_stream("pcm_f32le", rate=24_000, layout="mono")
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = 24_000
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    loaded = read_wav(path)
    assert loaded.source_rate == 24_000 and peak_hz(loaded.samples, ASR_RATE) == pytest.approx(500.0, abs=3.0)


@pytest.mark.parametrize("content", [None, b"", b"RIFF\x00\x00not a wave at all" * 3])
def test_unreadable_files_give_a_clear_error(tmp_path, content):
    path = tmp_path / "bad.wav"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(AudioFileError) as caught:
        read_wav(path)
    assert "bad.wav" in caught.value.text.en and "无法读取" in caught.value.text.zh


def test_write_wav_round_trip(tmp_path):
    path = write_wav(tmp_path / "o.wav", tone(1000.0, 0.25, 22_050), 22_050)
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()) == (22_050, 1, 2, 5512)


# ----- end-pointing -------------------------------------------------------------------------------------------------
def utterance(speech_s: float, silence_s: float, noise: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(1)
    audio = np.concatenate([np.zeros(int(0.3 * ASR_RATE)), tone(220.0, speech_s, level=0.2), np.zeros(int(silence_s * ASR_RATE))])
    return (audio + noise * rng.standard_normal(len(audio))).astype(np.float32)


def events_with_time(endpointer: EnergyEndpointer, audio: np.ndarray) -> list[tuple[EndpointEvent, float]]:
    found, fed = [], 0
    for block in blocks_of(audio, 480):  # 30 ms, as a microphone delivers
        fed += len(block)
        found += [(event, fed / ASR_RATE) for event in endpointer.feed(block)]
    return found


@pytest.mark.parametrize("trailing", [0.7, 0.4, 1.2])
def test_speech_end_is_detected_after_the_trailing_silence(trailing):
    audio = utterance(1.0, 2.0, noise=0.002)
    events = events_with_time(EnergyEndpointer(trailing_silence_s=trailing), audio)
    assert [e for e, _ in events] == [EndpointEvent.SPEECH_STARTED, EndpointEvent.SPEECH_ENDED]
    assert events[0][1] == pytest.approx(0.3 + 0.15, abs=0.07)
    assert events[1][1] - 1.3 == pytest.approx(trailing, abs=0.07)  # speech ended at 1.3 s


def test_a_short_pause_does_not_end_the_utterance_and_steady_noise_is_not_speech():
    pause = np.concatenate([utterance(0.5, 0.4), tone(220.0, 0.5, level=0.2), np.zeros(ASR_RATE)])
    events = [e for e, _ in events_with_time(EnergyEndpointer(), pause)]
    assert events == [EndpointEvent.SPEECH_STARTED, EndpointEvent.SPEECH_ENDED]
    fan = (0.004 * np.random.default_rng(2).standard_normal(3 * ASR_RATE)).astype(np.float32)
    assert events_with_time(EnergyEndpointer(), fan) == []
    assert not has_speech(np.zeros(ASR_RATE, np.float32)) and has_speech(utterance(0.5, 0.1))


# ----- push-to-talk -----------------------------------------------------------------------------------------------------
def test_hold_captures_only_while_held():
    ptt = PushToTalk(mode=PttMode.HOLD)
    ptt.feed(tone(220.0, 0.5))  # idle: dropped
    ptt.press()
    for block in blocks_of(utterance(1.0, 1.5), 480):
        ptt.feed(block)  # silence does not end a held utterance
    assert ptt.active and ptt.wait_utterance(0.01) is None
    ptt.release()
    got = ptt.wait_utterance(1)
    assert got is not None and got.ended_by == "released"
    assert len(got.samples) == len(utterance(1.0, 1.5)) and not ptt.active


def test_toggle_ends_on_second_press_or_on_trailing_silence():
    ptt = PushToTalk(mode=PttMode.TOGGLE, trailing_silence_s=0.7)
    ptt.press()
    for block in blocks_of(utterance(1.0, 2.0), 480):
        ptt.feed(block)
    got = ptt.wait_utterance(1)
    assert got is not None and got.ended_by == "silence"
    assert len(got.samples) / ASR_RATE == pytest.approx(0.3 + 1.0 + 0.7, abs=0.07)  # stops at end-of-speech
    ptt.press()
    ptt.feed(tone(220.0, 0.2))
    ptt.press()
    assert ptt.wait_utterance(1).ended_by == "toggled"


def test_max_length_and_cancel():
    ptt = PushToTalk(mode=PttMode.HOLD, max_utterance_s=1.0)
    ptt.press()
    for block in blocks_of(tone(220.0, 2.0), 480):
        ptt.feed(block)
    assert ptt.wait_utterance(1).ended_by == "max_length"
    ptt.press()
    ptt.feed(tone(220.0, 0.2))
    ptt.cancel()
    assert ptt.wait_utterance(0.05) is None and not ptt.active


# ----- devices (the real PortAudio library; this machine has no audio devices) ------------------------------------
def _has(kind: str) -> bool:
    import sounddevice as sd

    return any(d[f"max_{kind}_channels"] > 0 for d in sd.query_devices())


def test_opening_a_microphone_when_there_is_none_says_so():
    mic = Microphone()
    if _has("input"):  # a developer machine with a microphone: it must open and deliver audio
        with mic:
            assert mic.blocks.get(timeout=2).dtype == np.float32
        return
    with pytest.raises(AudioDeviceError) as caught:
        mic.open()
    assert "No microphone" in caught.value.text.en and "麦克风" in caught.value.text.zh


def test_opening_a_speaker_when_there_is_none_says_so():
    if _has("output"):
        SoundDeviceSink(22_050).close()
        return
    with pytest.raises(AudioDeviceError) as caught:
        SoundDeviceSink(22_050)
    assert "--out" in caught.value.text.en


def test_chunked_playback_stops_between_blocks():
    sink = MemorySink(16_000, realtime=True)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    assert play_chunked(sink, tone(300.0, 3.0), stop, block_s=0.05) is False
    assert time.monotonic() - started < 0.35 and sink.aborts
    assert len(sink.audio) / 16_000 < 0.35


# ----- earcons -----------------------------------------------------------------------------------------------------------
def test_earcons_are_short_soft_click_free_and_distinct():
    sounds = {e: earcon_audio(e, 22_050) for e in Earcon}
    for earcon, audio in sounds.items():
        assert 0.03 < len(audio) / 22_050 < 0.6, earcon
        assert np.max(np.abs(audio)) <= PEAK + 1e-6, earcon
        assert abs(audio[0]) < 0.01 and abs(audio[-1]) < 0.01, earcon  # smooth edges: no click
    signatures = {e: (len(NOTES[e]), tuple(round(n.freq) for n in NOTES[e])) for e in Earcon}
    assert len(set(signatures.values())) == len(Earcon)
    # The working tick is the quietest and shortest: it repeats during long steps.
    assert np.max(np.abs(sounds[Earcon.WORKING])) < min(np.max(np.abs(a)) for e, a in sounds.items() if e != Earcon.WORKING)
    rising = [n.freq for n in NOTES[Earcon.SUCCESS]]
    falling = [n.freq for n in NOTES[Earcon.ERROR]]
    assert rising == sorted(rising) and falling == sorted(falling, reverse=True)
    with pytest.raises(ValueError):
        earcon_audio("beep")


def test_play_and_working_ticker():
    sink = MemorySink(16_000)
    assert play("heard", sink)
    assert len(sink.audio) == len(earcon_audio("heard", 16_000))
    ticks = MemorySink(16_000)
    with WorkingTicker(ticks, period_s=0.1) as ticker:
        time.sleep(0.45)
    count = ticker.ticks
    time.sleep(0.2)
    assert 3 <= count <= 6 and ticker.ticks == count  # periodic, and silent once stopped
