"""`phonebuddy privacy show | export OUT | delete`: what is stored about the user, behind the caregiver PIN.

    phonebuddy privacy show [--json]          # the history's size, the profile's items and tiers, the log
    phonebuddy privacy export OUT.json        # everything stored, as JSON (step thumbnails left out)
    phonebuddy privacy delete                 # runs, messages, the profile, its key and the log

Every command asks for the caregiver PIN (typed at a hidden prompt, or one line on stdin with
`--pin-stdin`); the PIN guard's back-off applies. `--db` picks the history database (the privacy store
is `privacy.db` beside it); `--lang zh` speaks Chinese.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from assistant_core import languages as langs
from assistant_core.i18n import Catalog

MSG = Catalog(
    "privacy_cli",
    {
        "pin_prompt": "Caregiver PIN: ",
        "no_pin": "No PIN was given.",
        "cannot_write": "Could not write {path}: check the folder exists and can be written.",
    },
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="phonebuddy privacy", description=__doc__.split("\n\n")[0])
    p.add_argument("--db", help="the history database (default: the user data folder)")
    p.add_argument("--lang", choices=langs.choices(), default="en", help="language of messages")
    p.add_argument("--pin-stdin", action="store_true", help="read the caregiver PIN from one line of stdin")
    sub = p.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="say what is stored")
    show.add_argument("--json", action="store_true")
    export = sub.add_parser("export", help="write everything stored to a JSON file")
    export.add_argument("out")
    sub.add_parser("delete", help="delete the history, the profile and the log")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from assistant_core.history import HistoryError, HistoryStore
    from assistant_core.profile_store import (
        STORED,
        PrivacyStore,
        delete_stored,
        describe_stored,
        export_stored,
    )
    from assistant_core.settings import PinGuard

    lang = args.lang
    try:
        history = HistoryStore(args.db) if args.db else HistoryStore()
    except HistoryError as error:
        print(error.message.get(lang), file=sys.stderr)
        return 2
    if args.pin_stdin:
        pin = sys.stdin.readline().strip()
    else:
        import getpass

        pin = getpass.getpass(MSG["pin_prompt"].get(lang))
    if not pin:
        print(MSG["no_pin"].get(lang), file=sys.stderr)
        return 2
    check = PinGuard(history).check(pin)
    if not check.ok:
        print(check.message.get(lang) if check.message else MSG["no_pin"].get(lang), file=sys.stderr)
        return 3
    store = PrivacyStore.beside(history) or PrivacyStore()
    if args.command == "show":
        said = describe_stored(history, store)
        if args.json:
            print(json.dumps({"en": said.en, "zh": said.zh, "key_storage": store.key_storage,
                              "remote_log": store.log_rows()}, ensure_ascii=False, indent=2))
        else:
            print(said.get(lang))
        return 0
    if args.command == "export":
        out = Path(args.out)
        try:
            out.write_text(json.dumps(export_stored(history, store), ensure_ascii=False, indent=2, default=str),
                           encoding="utf-8")
            out.chmod(0o600)
        except OSError:
            print(MSG["cannot_write"].get(lang, path=str(out)), file=sys.stderr)
            return 2
        print(STORED["exported"].get(lang, path=str(out)))
        return 0
    print(delete_stored(history, store).get(lang))
    return 0


if __name__ == "__main__":
    sys.exit(main())
