"""The single `phonebuddy` entry point.

`phonebuddy` alone opens the desktop app; `phonebuddy --demo` opens it on the simulated phone. Every
other first word names a command group, owned by the package that does the work; each group's module
has `main(argv) -> int` and is imported only when used, so `phonebuddy world list` never loads Qt or
torch.
"""

from __future__ import annotations

import importlib
import logging
import sys

# group -> (module, one-line help)
GROUPS: dict[str, tuple[str, str]] = {
    "world": ("harness.phoneworld.cli", "PhoneWorld-lite, the simulated phone: list, solve, check, render, serve"),
    "devices": ("harness.cli", "phones over ADB: list, connect, info"),
    "run": ("phonebuddy.run_cli", "run one request headless: phonebuddy run GOAL --device ... --policy ..."),
    "policy": ("assistant_core.policy.cli", "the phone-use policy: parse a model reply, show profiles"),
    "models": ("assistant_core.policy.models_cli", "download or locate model weights"),
    "speech": ("speech.cli", "transcribe a WAV file or speak a sentence"),
    "train": ("training.cli", "personalize the policy: sft, rl, eval"),
    "verify": ("harness.verify.cli", "check a phone's state through ADB"),
    "privacy": ("phonebuddy.privacy_cli", "what is stored about the user: show, export OUT, delete (caregiver PIN)"),
}

USAGE = "usage: phonebuddy [--demo] | phonebuddy GROUP ...\n\ngroups:\n" + "\n".join(
    f"  {name:<8} {text}" for name, (_, text) in GROUPS.items()
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if argv and argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if not argv or argv[0].startswith("-"):
        from app.main import main as app_main  # Qt loads only here

        return app_main(argv)
    group, rest = argv[0], argv[1:]
    if group not in GROUPS:
        print(f"phonebuddy: unknown command {group!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    module = importlib.import_module(GROUPS[group][0])
    try:
        return int(module.main(rest) or 0)
    except BrokenPipeError:  # `phonebuddy world list --json | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
