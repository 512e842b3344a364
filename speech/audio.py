"""Audio in and out: WAV files, the microphone, push-to-talk, voice-activity end-pointing, playback sinks.

Conventions: audio is a 1-D `numpy.float32` array in [-1, 1]; speech recognition wants 16 kHz mono
(`ASR_RATE`). sounddevice (PortAudio) is imported only when a real device is opened, so everything else here
works on machines without audio hardware.

- `read_wav(path)` -> `LoadedAudio`: any PCM WAV (8/16/24/32-bit, any rate, any channel count; other formats
  through PyAV), mixed to mono, resampled to 16 kHz, with the clipped fraction measured.
- `EnergyEndpointer`: streaming end-of-utterance detection on 30 ms frames, with an adaptive noise floor;
  it ends an utterance after `trailing_silence_s` (0.7 s by default) of silence following speech.
- `PushToTalk`: the hold or toggle state machine in front of a microphone; `Microphone` is the sounddevice
  source (a clear `AudioDeviceError` when there is none); `WavFileSource` plays a WAV file in its place.
- `AudioSink`: where playback goes. `SoundDeviceSink` plays, `MemorySink` keeps the audio (tests, --out),
  and `play_chunked()` feeds any sink in small blocks so a stop request is honoured within one block.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from speech.messages import MESSAGES, AudioDeviceError, AudioFileError

log = logging.getLogger(__name__)

ASR_RATE = 16_000
CLIP_LEVEL = 0.999  # |sample| at or above this counts as clipped
CLIPPED_FRACTION_WARN = 0.01  # more than 1% of samples clipped: tell the user it is distorted


@dataclass(frozen=True)
class LoadedAudio:
    """Audio ready for recognition: 16 kHz mono float32, plus what we learnt about the source."""

    samples: np.ndarray
    sample_rate: int
    source_rate: int
    source_channels: int
    clipped_fraction: float

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate

    @property
    def clipped(self) -> bool:
        return self.clipped_fraction > CLIPPED_FRACTION_WARN


# ----- conversions ---------------------------------------------------------------------------------------
def to_mono(samples: np.ndarray) -> np.ndarray:
    """(frames, channels) -> (frames,), averaging channels; 1-D input is returned as is."""
    if samples.ndim == 1:
        return samples.astype(np.float32, copy=False)
    return samples.mean(axis=1).astype(np.float32)


def resample(samples: np.ndarray, source_rate: int, target_rate: int = ASR_RATE) -> np.ndarray:
    """Band-limited resampling by the FFT (what scipy.signal.resample does), for clips of a few seconds to a
    few minutes. Frequencies above the new Nyquist are removed, so downsampling does not alias."""
    if source_rate == target_rate or len(samples) == 0:
        return samples.astype(np.float32, copy=False)
    if source_rate <= 0 or target_rate <= 0:
        raise ValueError(f"sample rates must be positive, got {source_rate} -> {target_rate}")
    n_out = max(1, round(len(samples) * target_rate / source_rate))
    spectrum = np.fft.rfft(samples.astype(np.float64))
    keep = n_out // 2 + 1
    if keep <= len(spectrum):
        spectrum = spectrum[:keep]
    else:
        spectrum = np.concatenate([spectrum, np.zeros(keep - len(spectrum), dtype=spectrum.dtype)])
    out = np.fft.irfft(spectrum, n=n_out) * (n_out / len(samples))
    return out.astype(np.float32)


def clipped_fraction(samples: np.ndarray) -> float:
    if len(samples) == 0:
        return 0.0
    return float(np.count_nonzero(np.abs(samples) >= CLIP_LEVEL)) / len(samples)


def _pcm_to_float(raw: bytes, width: int, channels: int) -> np.ndarray:
    if width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        ints = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        ints = np.where(ints & 0x800000, ints - (1 << 24), ints)
        data = ints.astype(np.float32) / float(1 << 23)
    elif width == 4:
        data = (np.frombuffer(raw, dtype="<i4").astype(np.float64) / float(1 << 31)).astype(np.float32)
    else:
        raise ValueError(f"unsupported sample width {width}")
    return data.reshape(-1, channels) if channels > 1 else data


def read_wav(path: str | Path, *, target_rate: int = ASR_RATE) -> LoadedAudio:
    """Read an audio file for recognition. PCM WAV is read with the standard library; anything else (float
    WAV, FLAC, MP3...) through PyAV. Raises AudioFileError with a bilingual message on failure; never
    returns garbage for a file it could not read."""
    path = Path(path)
    if not path.is_file():
        raise AudioFileError(MESSAGES["wav_unreadable"].format(path=path, reason="file not found"))
    try:
        with wave.open(str(path), "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
        data = _pcm_to_float(raw, width, channels)
    except (wave.Error, EOFError, ValueError) as error:
        log.debug("stdlib wave could not read %s (%s); trying PyAV", path, error)
        data, rate, channels = _read_with_av(path)
    clip = clipped_fraction(data)
    mono = to_mono(data)
    return LoadedAudio(resample(mono, rate, target_rate), target_rate, rate, channels, clip)


def _read_with_av(path: Path) -> tuple[np.ndarray, int, int]:
    try:
        import av
    except ImportError as error:
        raise AudioFileError(MESSAGES["wav_unreadable"].format(path=path, reason=error)) from error
    try:
        with av.open(str(path)) as container:
            stream = container.streams.audio[0]
            rate, channels = stream.rate, stream.channels
            frames = [frame.to_ndarray() for frame in container.decode(stream)]
    except (av.FFmpegError, IndexError, ValueError) as error:
        raise AudioFileError(MESSAGES["wav_unreadable"].format(path=path, reason=error)) from error
    if not frames or not rate:
        raise AudioFileError(MESSAGES["wav_unreadable"].format(path=path, reason="no audio in the file"))
    data = np.concatenate(frames, axis=1)  # (channels or 1, n) planar, or (1, n*channels) packed
    if data.shape[0] == 1 and channels > 1:
        data = data.reshape(-1, channels)
    else:
        data = data.T
    if np.issubdtype(data.dtype, np.integer):
        data = data.astype(np.float32) / float(np.iinfo(data.dtype).max + 1)
    data = np.asarray(data, dtype=np.float32)
    return (data[:, 0] if channels == 1 else data), int(rate), int(channels)


def write_wav(path: str | Path, samples: np.ndarray, sample_rate: int) -> Path:
    """Write float audio as 16-bit PCM mono WAV (values outside [-1, 1] are clipped)."""
    path = Path(path)
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    return path


# ----- voice activity end-pointing -------------------------------------------------------------------------
class EndpointEvent(StrEnum):
    SPEECH_STARTED = "speech_started"
    SPEECH_ENDED = "speech_ended"


@dataclass
class EnergyEndpointer:
    """Streaming voice-activity end-pointing on short frames, by energy over an adaptive noise floor.

    Feed frames of any length with `feed()`; it returns SPEECH_STARTED once `min_speech_s` of voiced audio
    has been heard and SPEECH_ENDED once `trailing_silence_s` of unvoiced audio follows speech (then it
    resets). A frame is voiced when its RMS is above both `absolute_floor` and `ratio` times the running
    noise floor (the floor follows quiet frames quickly and loud ones slowly, so steady fan noise does not
    count as speech). Not thread-safe: one endpointer per stream.
    """

    sample_rate: int = ASR_RATE
    trailing_silence_s: float = 0.7
    min_speech_s: float = 0.15
    frame_s: float = 0.03
    absolute_floor: float = 0.01
    ratio: float = 3.0
    noise_floor: float = 0.003
    in_speech: bool = field(default=False, init=False)
    _voiced_run: int = field(default=0, init=False)
    _silent_run: int = field(default=0, init=False)
    _pending: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), init=False)

    @property
    def frame_len(self) -> int:
        return max(1, int(self.sample_rate * self.frame_s))

    def frame_voiced(self, frame: np.ndarray) -> bool:
        rms = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64)))) if len(frame) else 0.0
        voiced = rms > self.absolute_floor and rms > self.ratio * self.noise_floor
        # Track the noise floor: fast down, slow up, and not at all during speech.
        if not voiced:
            speed = 0.3 if rms < self.noise_floor else 0.02
            self.noise_floor = max(1e-5, (1 - speed) * self.noise_floor + speed * rms)
        return voiced

    def feed(self, samples: np.ndarray) -> list[EndpointEvent]:
        events: list[EndpointEvent] = []
        data = np.concatenate([self._pending, np.asarray(samples, np.float32).reshape(-1)])
        n = self.frame_len
        usable = len(data) - len(data) % n
        self._pending = data[usable:]
        start_frames = max(1, round(self.min_speech_s / self.frame_s))
        end_frames = max(1, round(self.trailing_silence_s / self.frame_s))
        for i in range(0, usable, n):
            voiced = self.frame_voiced(data[i : i + n])
            if voiced:
                self._voiced_run += 1
                self._silent_run = 0
                if not self.in_speech and self._voiced_run >= start_frames:
                    self.in_speech = True
                    events.append(EndpointEvent.SPEECH_STARTED)
            else:
                self._voiced_run = 0
                self._silent_run += 1
                if self.in_speech and self._silent_run >= end_frames:
                    self.in_speech = False
                    events.append(EndpointEvent.SPEECH_ENDED)
        return events

    def reset(self) -> None:
        self.in_speech = False
        self._voiced_run = self._silent_run = 0
        self._pending = np.zeros(0, np.float32)


def has_speech(samples: np.ndarray, sample_rate: int = ASR_RATE, *, min_speech_s: float = 0.15) -> bool:
    """True when the endpointer hears at least `min_speech_s` of voiced audio anywhere in the clip.
    Cheap (a few ms for a 10 s clip); used to skip recognition of pure silence."""
    endpointer = EnergyEndpointer(sample_rate=sample_rate, min_speech_s=min_speech_s)
    return EndpointEvent.SPEECH_STARTED in endpointer.feed(samples)


# ----- microphone and push-to-talk ------------------------------------------------------------------------
def _sounddevice():
    """Import sounddevice, turning a missing PortAudio into a clear AudioDeviceError."""
    try:
        import sounddevice
    except OSError as error:  # sounddevice raises OSError('PortAudio library not found')
        raise AudioDeviceError(MESSAGES["audio_library_missing"]) from error
    return sounddevice


def _has_device(sd, kind: str) -> bool:
    key = "max_input_channels" if kind == "input" else "max_output_channels"
    try:
        devices = sd.query_devices()
    except sd.PortAudioError:
        return False
    return any(int(device.get(key, 0)) > 0 for device in devices)


class PttMode(StrEnum):
    HOLD = "hold"  # speak while the key is held; release ends the utterance
    TOGGLE = "toggle"  # press to start; press again, or trailing silence, ends it


class Microphone:
    """The default input device through sounddevice, delivering float32 mono blocks to a queue.

    `open()` raises AudioDeviceError(no_microphone) when the machine has no input device, and
    AudioDeviceError(audio_device_failed) when PortAudio refuses to open it."""

    def __init__(self, *, sample_rate: int = ASR_RATE, block_s: float = 0.03, device: int | str | None = None):
        self.sample_rate = sample_rate
        self.block = max(1, int(sample_rate * block_s))
        self.device = device
        self.blocks: queue.Queue[np.ndarray] = queue.Queue()
        self._stream = None

    def open(self) -> None:
        sd = _sounddevice()
        if self.device is None and not _has_device(sd, "input"):
            raise AudioDeviceError(MESSAGES["no_microphone"])
        try:
            self._stream = sd.InputStream(
                samplerate=self.sample_rate, channels=1, dtype="float32", blocksize=self.block,
                device=self.device, callback=self._callback,
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as error:
            self._stream = None
            raise AudioDeviceError(MESSAGES["audio_device_failed"].format(reason=error)) from error

    def _callback(self, indata, frames, time_info, status) -> None:  # PortAudio thread
        if status:
            log.debug("microphone status: %s", status)
        self.blocks.put(indata[:, 0].copy())

    def close(self) -> None:
        if self._stream is not None:
            self._stream.stop()
            self._stream.close()
            self._stream = None

    def __enter__(self) -> Microphone:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WavFileSource:
    """A WAV file played into a block queue as if it were a microphone (same `open/close/blocks` as
    `Microphone`): for users without a microphone, for demos and for tests. `realtime=True` paces the
    blocks at the speed of speech; `tail_silence_s` of silence follows the file so end-pointing can fire."""

    def __init__(self, path: str | Path, *, block_s: float = 0.03, realtime: bool = True, tail_silence_s: float = 1.5):
        loaded = read_wav(path)
        self.sample_rate = ASR_RATE
        self.samples = np.concatenate([loaded.samples, np.zeros(int(tail_silence_s * ASR_RATE), np.float32)])
        self.block = max(1, int(ASR_RATE * block_s))
        self.realtime = realtime
        self.blocks: queue.Queue[np.ndarray] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.finished = threading.Event()

    def open(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="wav-source", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        for i, block in enumerate(blocks_of(self.samples, self.block)):
            if self._stop.is_set():
                break
            if self.realtime:
                delay = start + i * self.block / ASR_RATE - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            self.blocks.put(block)
        self.finished.set()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def __enter__(self) -> WavFileSource:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Utterance:
    """One captured utterance: 16 kHz mono audio and why capture ended ("released", "toggled",
    "silence", "max_length")."""

    samples: np.ndarray
    sample_rate: int
    ended_by: str
    ended_at: float  # time.monotonic() when capture ended: the start of end-of-speech latency


class PushToTalk:
    """Push-to-talk in front of any block source (a Microphone's queue, or a WAV file's blocks in tests).

    HOLD: `press()` starts capture, `release()` ends it. TOGGLE: `press()` starts, a second `press()` ends,
    and so does `trailing_silence_s` of silence after speech (the endpointer). Blocks arriving while idle
    are dropped. `feed(block)` is called from the audio thread; `wait_utterance()` from the consumer.
    """

    def __init__(
        self,
        *,
        mode: PttMode = PttMode.HOLD,
        sample_rate: int = ASR_RATE,
        trailing_silence_s: float = 0.7,
        max_utterance_s: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.mode = PttMode(mode)
        self.sample_rate = sample_rate
        self.max_utterance_s = max_utterance_s
        self.endpointer = EnergyEndpointer(sample_rate=sample_rate, trailing_silence_s=trailing_silence_s)
        self.clock = clock
        self._lock = threading.Lock()
        self._active = False
        self._blocks: list[np.ndarray] = []
        self._done: queue.Queue[Utterance] = queue.Queue()

    @property
    def active(self) -> bool:
        return self._active

    def press(self) -> None:
        with self._lock:
            if self._active and self.mode is PttMode.TOGGLE:
                self._finish_locked("toggled")
                return
            if not self._active:
                self._active = True
                self._blocks = []
                self.endpointer.reset()

    def release(self) -> None:
        with self._lock:
            if self._active and self.mode is PttMode.HOLD:
                self._finish_locked("released")

    def cancel(self) -> None:
        with self._lock:
            self._active = False
            self._blocks = []

    def feed(self, block: np.ndarray) -> None:
        with self._lock:
            if not self._active:
                return
            self._blocks.append(np.asarray(block, np.float32).reshape(-1))
            events = self.endpointer.feed(block)
            if self.mode is PttMode.TOGGLE and EndpointEvent.SPEECH_ENDED in events:
                self._finish_locked("silence")
            elif sum(len(b) for b in self._blocks) >= self.max_utterance_s * self.sample_rate:
                self._finish_locked("max_length")

    def _finish_locked(self, why: str) -> None:
        samples = np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.float32)
        self._active = False
        self._blocks = []
        self._done.put(Utterance(samples, self.sample_rate, why, self.clock()))

    def wait_utterance(self, timeout: float | None = None) -> Utterance | None:
        """The next finished utterance, or None after `timeout` seconds."""
        try:
            return self._done.get(timeout=timeout)
        except queue.Empty:
            return None

    def pump(self, source: queue.Queue[np.ndarray], stop: threading.Event) -> None:
        """Move blocks from a Microphone's queue into `feed` until `stop` is set (run on a worker thread)."""
        while not stop.is_set():
            try:
                self.feed(source.get(timeout=0.05))
            except queue.Empty:
                continue


def blocks_of(samples: np.ndarray, block_len: int) -> Iterator[np.ndarray]:
    """Split audio into blocks of `block_len` samples (the last may be shorter), as a microphone delivers."""
    for i in range(0, len(samples), block_len):
        yield samples[i : i + block_len]


# ----- playback ----------------------------------------------------------------------------------------------
@runtime_checkable
class AudioSink(Protocol):
    """Where speech and earcons are played. `write` may block until the device has room (that is what paces
    playback); `abort` drops whatever is queued in the device, immediately; `drain` waits for the end."""

    sample_rate: int

    def write(self, samples: np.ndarray) -> None: ...

    def abort(self) -> None: ...

    def drain(self) -> None: ...


class MemorySink:
    """Keeps everything written, with the monotonic time each block arrived (for tests and `--out`).
    `realtime=True` makes `write` take as long as the audio lasts, like a sound card."""

    def __init__(self, sample_rate: int = 22_050, *, realtime: bool = False, clock: Callable[[], float] = time.monotonic):
        self.sample_rate = sample_rate
        self.realtime = realtime
        self.clock = clock
        self.blocks: list[np.ndarray] = []
        self.arrivals: list[float] = []
        self.aborts: list[float] = []

    def write(self, samples: np.ndarray) -> None:
        self.arrivals.append(self.clock())
        self.blocks.append(np.asarray(samples, np.float32).copy())
        if self.realtime:
            time.sleep(len(samples) / self.sample_rate)

    def abort(self) -> None:
        self.aborts.append(self.clock())

    def drain(self) -> None:
        return None

    @property
    def audio(self) -> np.ndarray:
        return np.concatenate(self.blocks) if self.blocks else np.zeros(0, np.float32)


class SoundDeviceSink:
    """Plays through the default output device with a sounddevice OutputStream (blocking writes of small
    blocks, so the stream's own buffer stays short and `abort()` silences it at once)."""

    def __init__(self, sample_rate: int = 22_050, *, device: int | str | None = None, latency: str = "low"):
        sd = _sounddevice()
        if device is None and not _has_device(sd, "output"):
            raise AudioDeviceError(MESSAGES["no_speaker_device"])
        self.sample_rate = sample_rate
        self._sd = sd
        self._aborted_at = float("-inf")
        try:
            self._stream = sd.OutputStream(samplerate=sample_rate, channels=1, dtype="float32", device=device, latency=latency)
            self._stream.start()
        except (sd.PortAudioError, ValueError) as error:
            raise AudioDeviceError(MESSAGES["audio_device_failed"].format(reason=error)) from error

    def write(self, samples: np.ndarray) -> None:
        try:
            if not self._stream.active:
                self._stream.start()
            self._stream.write(np.asarray(samples, np.float32).reshape(-1, 1))
        except self._sd.PortAudioError as error:
            # abort() from another thread stops the stream under a blocked write: that block is dropped,
            # which is what stopping means. Anything else is a device problem the caller should hear of.
            if time.monotonic() - self._aborted_at > 1.0:
                raise AudioDeviceError(MESSAGES["audio_device_failed"].format(reason=error)) from error
            log.debug("write interrupted by abort: %s", error)

    def abort(self) -> None:
        self._aborted_at = time.monotonic()
        self._stream.abort()  # drops buffered audio; restarted on the next write

    def drain(self) -> None:
        self._stream.stop()  # stop() waits for the buffers to play out

    def close(self) -> None:
        self._stream.close()


def play_chunked(
    sink: AudioSink,
    samples: np.ndarray,
    stop: threading.Event,
    *,
    block_s: float = 0.05,
) -> bool:
    """Write `samples` to `sink` in blocks of `block_s` seconds, checking `stop` before each block; on stop,
    abort the sink (flush what is queued) and return False. Returns True when everything was written."""
    block = max(1, int(sink.sample_rate * block_s))
    for start in range(0, len(samples), block):
        if stop.is_set():
            sink.abort()
            return False
        sink.write(samples[start : start + block])
    return not stop.is_set()
