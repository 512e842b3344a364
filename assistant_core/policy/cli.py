"""`phonebuddy policy ...`: parse a model reply, list profiles, show a prompt, recommend a model.

    phonebuddy policy parse --width 1080 --height 2400 [--profile P] < reply.txt
        prints {"action": {...}, "thought": ..., "dialect": ..., "notes": [...]} as JSON; exit 1 with the
        error on stderr when the reply cannot be turned into an action.
    phonebuddy policy profiles            the model profiles (JSON lines)
    phonebuddy policy prompt GOAL [--profile P] [--lang en|zh]   the request text (image shown as <image>)
    phonebuddy policy recommend [--lang en|zh]   which model this computer should run, and why
    phonebuddy policy serve --model-dir DIR [--profile P] [--port 8000] [--host 127.0.0.1]
        [--quantization nf4|int8|bf16|fp32] [--split-reasoning]
        an OpenAI-compatible chat-completions server over the local model (for a household GPU computer)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from assistant_core.errors import PolicyOutputError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="phonebuddy policy", description="the phone-use policy")
    sub = parser.add_subparsers(dest="command", required=True)
    parse = sub.add_parser("parse", help="parse a model reply read from stdin (or --file) into an Action")
    parse.add_argument("--width", type=int, required=True)
    parse.add_argument("--height", type=int, required=True)
    parse.add_argument("--profile", default=None, help="model profile (default phonebuddy-4b)")
    parse.add_argument("--file", default=None, help="read the reply from this file instead of stdin")
    sub.add_parser("profiles", help="list the model profiles")
    prompt = sub.add_parser("prompt", help="print the request text for a goal (no model needed)")
    prompt.add_argument("goal")
    prompt.add_argument("--profile", default=None)
    prompt.add_argument("--lang", default="en")
    prompt.add_argument("--width", type=int, default=1080)
    prompt.add_argument("--height", type=int, default=2400)
    recommend = sub.add_parser("recommend", help="which model to run on this computer")
    recommend.add_argument("--lang", default="en")
    serve = sub.add_parser("serve", help="serve the local model over the OpenAI chat-completions API")
    serve.add_argument("--model-dir", default=None, help="model folder (default: the profile's cached weights)")
    serve.add_argument("--profile", default=None)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--quantization", default=None, choices=["nf4", "int8", "bf16", "fp16", "fp32"])
    serve.add_argument("--split-reasoning", action="store_true", help="return the thought in reasoning_content")
    serve.add_argument("--lang", default="en")
    serve.add_argument("--token-file", default=None,
                       help="write this launch's access token to this new file (mode 0600; an existing "
                            "file or a link is refused)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "parse":
        return _parse(args)
    if args.command == "profiles":
        from assistant_core.policy.profiles import load_profiles

        book = load_profiles()
        for name, p in book.profiles.items():
            print(json.dumps({"name": name, "repo_id": p.repo_id, "architecture": p.architecture,
                              "backends": [str(b) for b in p.backends], "dialect": str(p.dialect), "grid": p.grid,
                              "max_pixels": p.max_pixels, "default": name == book.default,
                              "cpu_default": name == book.cpu_default}, ensure_ascii=False))
        return 0
    if args.command == "prompt":
        return _prompt(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "recommend":
        from assistant_core.policy.hardware import detect_hardware, recommend

        print(recommend(detect_hardware()).describe().get(args.lang))
        return 0
    return 2


def _parse(args: argparse.Namespace) -> int:
    from assistant_core.policy.parsing import parse_reply

    try:
        if args.file:
            with open(args.file, encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = sys.stdin.read()
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read the reply: {error}", file=sys.stderr)
        return 2
    try:
        reply = parse_reply(text, args.width, args.height, args.profile)
    except PolicyOutputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps({"action": reply.action.to_dict(), "thought": reply.thought, "dialect": str(reply.dialect),
                      "tool": reply.tool_name, "notes": list(reply.notes)}, ensure_ascii=False))
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from PIL import Image

    from assistant_core.policy.prompt import ImagePart, build_prompt
    from assistant_core.types import Observation

    if not (0 < args.width <= 10_000 and 0 < args.height <= 10_000):
        print(f"error: the screen size must be 1 to 10000 pixels a side, got {args.width}x{args.height}",
              file=sys.stderr)
        return 2
    obs = Observation(width=args.width, height=args.height, foreground="",
                      screenshot=Image.new("RGB", (args.width, args.height), "white"))
    try:
        prompt = build_prompt(args.goal, obs, (), args.profile, lang=args.lang)
    except KeyError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if prompt.system:
        print(f"[system]\n{prompt.system}\n")
    else:
        print("[system]\n(empty)\n")
    print("[user]")
    for part in prompt.user:
        print(f"<image {part.size[0]}x{part.size[1]} JPEG>" if isinstance(part, ImagePart) else part)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from assistant_core.policy.errors import PolicyUnavailable, unavailable
    from assistant_core.policy.local import LocalPolicy
    from assistant_core.policy.profiles import get_profile
    from assistant_core.policy.serve import ChatServer
    from assistant_core.policy.weights import locate_weights

    if args.token_file and os.path.lexists(args.token_file):  # said before the model loads (minutes)
        print(f"error: the access token was not written: {args.token_file} already exists (or is a link); the "
              "token is only written to a new file. Remove it or choose another name.", file=sys.stderr)
        return 1
    try:
        # The model this computer serves (the runs that use it build a RemotePolicy by phonebuddy.policyspec).
        profile = get_profile(args.profile)
        if not profile.runs_locally:
            raise unavailable("not_local", title=profile.title.en)
        policy = LocalPolicy(locate_weights(profile, local_dir=args.model_dir), profile=profile,
                             quantization=args.quantization)
        policy.load(on_progress=lambda p: print(p.message.get(args.lang), file=sys.stderr))
        server = ChatServer(policy, host=args.host, port=args.port, split_reasoning=args.split_reasoning)
    except PolicyUnavailable as error:
        print(f"error: {error.message.get(args.lang)}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    print(f"serving {server.model_name} at {server.url}", file=sys.stderr)
    if args.token_file:
        from assistant_core.policy.serve import TokenFileError, write_token_file

        try:
            write_token_file(args.token_file, server.token)
        except TokenFileError as error:
            print(f"error: the access token was not written: {error.message}", file=sys.stderr)
            return 1
        print(f"access token written to {args.token_file}", file=sys.stderr)
    else:
        print(f"access token (give it as the API key, e.g. PHONEBUDDY_API_KEY): {server.token}", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
