"""Policy errors that carry a bilingual message for the user (still `PolicyUnavailableError`s)."""

from __future__ import annotations

from assistant_core.errors import PolicyUnavailableError
from assistant_core.i18n import Catalog, Text

MESSAGES = Catalog("policy", {
    "no_weights": (
        "The model {title} is not on this computer (looked in {where}). Download it with "
        "`phonebuddy models download {name}`, or choose a folder that holds it in Settings.",
        "这台电脑上没有模型 {title}（已查找 {where}）。请用 `phonebuddy models download {name}` 下载，"
        "或在设置中选择存放模型的文件夹。"),
    "offline": (
        "The model {title} is not downloaded yet and there is no internet connection. Connect to the internet "
        "and run `phonebuddy models download {name}`, or copy the model folder here and choose it in Settings.",
        "模型 {title} 还没有下载，而且现在没有网络。请联网后运行 `phonebuddy models download {name}`，"
        "或把模型文件夹复制过来并在设置中选择。"),
    "bad_folder": (
        "The folder {where} does not hold a usable model ({detail}).",
        "文件夹 {where} 里没有可用的模型（{detail}）。"),
    "no_space": (
        "Not enough free disk space for {title}: it needs about {need:.1f} GB, {free:.1f} GB are free in {where}.",
        "磁盘空间不足，放不下 {title}：需要约 {need:.1f} GB，{where} 只剩 {free:.1f} GB。"),
    "download_failed": (
        "Downloading {title} stopped: {reason}. What is already downloaded is kept; {again} to continue.",
        "下载 {title} 中断了：{reason}。已经下载的部分会保留；{again}即可继续。"),
    "no_internet": (
        "I can't reach the internet to download {title}. Check the connection, then {again}; what is already "
        "downloaded is kept.",
        "我连不上互联网，无法下载 {title}。请检查网络连接，然后{again}；已经下载的部分会保留。"),
    "offline_download": (
        "{title} is not downloaded yet, and this computer is set to stay offline (HF_HUB_OFFLINE). Connect to the "
        "internet, turn that setting off, then {again}; or copy the model folder here and choose it in Settings.",
        "{title} 还没有下载，而这台电脑被设置为不联网（HF_HUB_OFFLINE）。请联网并关闭这个设置，然后{again}；"
        "或者把模型文件夹复制过来，在设置中选择它。"),
    "reason_server": ("the model site answered with an error", "模型网站返回了错误"),
    "reason_not_found": ("the model site does not have this model", "模型网站上没有这个模型"),
    "reason_disk": ("the files could not be written to this computer's disk", "文件无法写入这台电脑的磁盘"),
    "reason_other": ("the download was interrupted", "下载被打断了"),
    "no_gpu": (
        "{quant} needs a CUDA graphics card, and none was found. On this computer use fp32 or nf4.",
        "{quant} 需要 CUDA 显卡，但没有找到。在这台电脑上请使用 fp32 或 nf4。"),
    "out_of_memory": (
        "The model does not fit in memory ({detail}). Try the 4-bit setting, a smaller model, or a server.",
        "模型放不下（{detail}）。请尝试 4 位设置、更小的模型或服务器。"),
    "load_failed": (
        "The model could not be loaded: {detail}",
        "模型无法加载：{detail}"),
    "server_unreachable": (
        "The model server at {url} cannot be reached ({detail}). Check that it is running and the address in "
        "Settings is right.",
        "无法连接位于 {url} 的模型服务器（{detail}）。请确认服务器正在运行，并检查设置中的地址。"),
    "server_error": (
        "The model server at {url} answered with an error: {detail}",
        "位于 {url} 的模型服务器返回了错误：{detail}"),
    "server_auth": (
        "The model server at {url} refused the API key ({detail}). Check the key in Settings.",
        "位于 {url} 的模型服务器拒绝了 API 密钥（{detail}）。请检查设置中的密钥。"),
    "server_redirect": (
        "The model server at {url} tried to send the request to another address ({target}). Nothing was sent "
        "there. If the server really moved, put its new address in Settings.",
        "位于 {url} 的模型服务器试图把请求转到另一个地址（{target}）。没有向那里发送任何内容。"
        "如果服务器确实换了地址，请在设置中填写新地址。"),
    "server_slow": (
        "The model server at {url} did not answer within {seconds:.0f} seconds ({detail}). The step was stopped.",
        "位于 {url} 的模型服务器在 {seconds:.0f} 秒内没有给出回答（{detail}）。这一步已停止。"),
    "server_too_big": (
        "The model server at {url} sent a reply larger than {limit_mb:.0f} MB; it was not read to the end.",
        "位于 {url} 的模型服务器发来的回答超过 {limit_mb:.0f} MB，没有继续读取。"),
    "server_tls": (
        "The secure connection to the model server at {url} could not be verified ({detail}). Nothing was sent.",
        "无法验证与位于 {url} 的模型服务器之间的安全连接（{detail}）。没有发送任何内容。"),
    "not_local": (
        "{title} can only run on a server; set a server address for it in Settings.",
        "{title} 只能在服务器上运行；请在设置中为它填写服务器地址。"),
    "loading": ("Loading the model…", "正在加载模型…"),
    "loading_processor": ("Reading the tokenizer and image settings…", "正在读取分词器和图像设置…"),
    "loading_weights": ("Loading the model weights ({quant}, {device})…", "正在加载模型权重（{quant}，{device}）…"),
    "loading_adapter": ("Loading your personalization…", "正在加载您的个性化设置…"),
    "ready": ("The model is ready.", "模型已就绪。"),
    "thinking": ("Thinking…", "正在思考…"),
})


class PolicyUnavailable(PolicyUnavailableError):
    """A PolicyUnavailableError with a message in both languages (`message`); str() is the English."""

    def __init__(self, message: Text, *, detail: str = ""):
        self.message = message
        self.detail = detail
        super().__init__(message.en)


def unavailable(key: str, **values: object) -> PolicyUnavailable:
    return PolicyUnavailable(MESSAGES[key].format(**values), detail=str(values.get("detail", "")))
