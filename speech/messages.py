"""Every user-facing speech message, in English and Chinese, and the errors that carry them.

An error raised by the speech package carries a `Text` (both languages), so the app can show or speak it in
the user's language; `str(error)` is the English text (for logs and the CLI).
"""

from __future__ import annotations

from assistant_core.i18n import Catalog, Text

MESSAGES = Catalog(
    "speech",
    {
        "model_missing": (
            "The speech model '{name}' is not on this computer. Looked in: {places}. Connect to the internet "
            "once so it can be downloaded, or copy it into {cache}.",
            "这台电脑上没有语音模型“{name}”。已查找：{places}。请联网一次以便下载，或把模型复制到 {cache}。",
        ),
        "model_offline": (
            "I can't reach the internet to download the speech model '{name}'. Check the connection, then {again}; "
            "what is already downloaded is kept.",
            "我连不上互联网，无法下载语音模型“{name}”。请检查网络连接，然后{again}；已经下载的部分会保留。",
        ),
        "model_no_downloader": (
            "The speech model '{name}' must be downloaded, but this installation has no download part. Reinstall "
            "PhoneBuddy with its speech part, or copy the model onto this computer.",
            "需要下载语音模型“{name}”，但这次安装缺少下载功能。请重新安装带语音部分的手机助手，或把模型复制到这台电脑上。",
        ),
        "model_size_mismatch": (
            "The speech model file {path} is damaged or incomplete ({got} bytes, expected {want}). "
            "It will be downloaded or rebuilt again.",
            "语音模型文件 {path} 已损坏或不完整（{got} 字节，应为 {want}）。将重新下载或重建。",
        ),
        "model_hash_mismatch": (
            "The speech model file {path} does not match its published checksum (sha256 {got}, expected {want}), "
            "so it is not used.",
            "语音模型文件 {path} 与公布的校验值不符（sha256 {got}，应为 {want}），因此不使用。",
        ),
        "model_unknown": (
            "Unknown speech model '{name}'. Choose one of: {choices}.",
            "未知的语音模型“{name}”。可选：{choices}。",
        ),
        "model_load_failed": (
            "The speech model in {path} could not be loaded: it may be damaged or incomplete. Download it again "
            "from the setup (caregiver settings, F12).",
            "无法加载 {path} 中的语音模型：它可能已损坏或不完整。请在设置向导（照护者设置，F12）里重新下载。",
        ),
        "no_microphone": (
            "No microphone was found. Plug one in, or choose a WAV file to listen to instead.",
            "没有找到麦克风。请接上麦克风，或改用 WAV 音频文件。",
        ),
        "no_speaker_device": (
            "No speaker or headphones were found, so nothing can be played. Use --out FILE.wav to save the "
            "speech to a file.",
            "没有找到扬声器或耳机，无法播放。可以用 --out FILE.wav 把语音保存到文件。",
        ),
        "audio_device_failed": (
            "The audio device could not be opened: {reason}",
            "无法打开音频设备：{reason}",
        ),
        "audio_library_missing": (
            "The audio library PortAudio is not installed (on Debian or Ubuntu: apt-get install libportaudio2).",
            "未安装音频库 PortAudio（Debian 或 Ubuntu 上：apt-get install libportaudio2）。",
        ),
        "wav_unreadable": (
            "The audio file {path} cannot be read: {reason}",
            "无法读取音频文件 {path}：{reason}",
        ),
        "wav_clipped": (
            "The recording is too loud (distorted); speak a little further from the microphone.",
            "录音音量过大（失真），请离麦克风稍远一些。",
        ),
        "not_heard": (
            "Sorry, I did not catch that. Please say it again.",
            "抱歉，我没听清。请再说一遍。",
        ),
        "not_sure": (
            "I am not sure I heard you right. Did you say: {text}?",
            "我不确定是否听对了。您说的是：{text}？",
        ),
        "voice_missing": (
            "The {language} voice is not installed, so I will read this with the voice I have.",
            "没有安装{language}语音，我会用现有的语音朗读。",
        ),
        "voice_unavailable": (
            "No voice for speech output could be found: {reason}",
            "找不到可用于朗读的语音：{reason}",
        ),
        "lang_en": ("English", "英语"),
        "lang_zh": ("Chinese", "中文"),
        "download_progress": (
            "Downloading speech model {name}: {done} of {total} MB",
            "正在下载语音模型 {name}：{done} / {total} MB",
        ),
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
