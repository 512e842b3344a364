"""`phonebuddy models ...`: download or locate model weights.

    phonebuddy models download phonebuddy-4b [--dir FOLDER] [--cache-dir DIR] [--revision REV] [--lang zh]
        downloads through huggingface_hub with progress (checks disk space; run again after a failure to continue;
        a failure is said in plain words: "I can't reach the internet to download …")
    phonebuddy models where phonebuddy-4b [--dir FOLDER]    prints the folder, or why it is not there (exit 1)
    phonebuddy models list                                  profiles and whether their weights are here
"""

from __future__ import annotations

import argparse
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="phonebuddy models", description="download or locate model weights")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("download", "download a model's weights"), ("where", "show where a model's weights are")):
        p = sub.add_parser(name, help=text)
        p.add_argument("profile", help="model profile, e.g. phonebuddy-4b")
        p.add_argument("--dir", default=None, help="a local folder (offline use, or where to download to)")
        p.add_argument("--cache-dir", default=None, help="Hugging Face cache folder (default: the user's)")
        p.add_argument("--lang", default="en")
        if name == "download":
            p.add_argument("--revision", default=None)
    sub.add_parser("list", help="list profiles and whether their weights are on this computer")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from assistant_core.policy.errors import PolicyUnavailable
    from assistant_core.policy.profiles import load_profiles
    from assistant_core.policy.weights import download_weights, locate_weights

    if args.command == "list":
        for name, profile in load_profiles().profiles.items():
            try:
                where = str(locate_weights(profile))
            except PolicyUnavailable:
                where = "not downloaded"
            print(f"{name:<18} {profile.repo_id:<32} ~{profile.download_gb:.1f} GB  {where}")
        return 0
    try:
        profile = load_profiles().get(args.profile)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2
    try:
        if args.command == "where":
            print(locate_weights(profile, local_dir=args.dir, cache_dir=args.cache_dir))
            return 0
        last = [-1]

        def progress(p) -> None:
            percent = int(p.fraction * 100)
            if percent != last[0]:
                last[0] = percent
                print(f"\r{p.description[:40]:<40} {percent:3d}%", end="", file=sys.stderr, flush=True)

        path = download_weights(profile, local_dir=args.dir, cache_dir=args.cache_dir, revision=args.revision,
                                on_progress=progress)
        print(file=sys.stderr)
        print(path)
        return 0
    except PolicyUnavailable as error:  # plain words with the next step; the hub's own error is in the log
        print(error.message.get(args.lang), file=sys.stderr)
        return 1
