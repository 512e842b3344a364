#!/bin/bash
# Wrap PhoneBuddy.app (built by `python installers/build.py macos`) into a .dmg.
#   bash installers/macos/make_dmg.sh dist/PhoneBuddy.app dist/PhoneBuddy-<version>.dmg <version>
# Copies the localized Info.plist strings (microphone permission in English and Chinese) into the app,
# checks the parts the bundle must carry (installers/manifest.py DATA_PARTS, macOS), signs ad hoc
# (a Developer ID signature and notarization need the project's Apple account: set CODESIGN_IDENTITY),
# and builds a compressed disk image with an /Applications link.
set -euo pipefail
app="$1"; dmg="$2"; version="$3"
here="$(cd "$(dirname "$0")" && pwd)"
[ "$(uname)" = "Darwin" ] || { echo "make_dmg.sh: runs on macOS only" >&2; exit 2; }
[ -d "$app" ] || { echo "make_dmg.sh: no app at $app" >&2; exit 1; }
resources="$app/Contents/Resources"
for lproj in en.lproj zh-Hans.lproj; do
  mkdir -p "$resources/$lproj"
  cp "$here/$lproj/InfoPlist.strings" "$resources/$lproj/InfoPlist.strings"
done
# BUNDLED-DATA (must match installers/manifest.py bundled_data_list("macos"))
parts=(
  "THIRD_PARTY_LICENSES.txt"
  "adbutils/binaries/adb"
  "fonts/wqy-microhei.ttc"
  "piper/espeak-ng-data/phontab"
  "scrcpy/scrcpy-server.jar"
)
for part in "${parts[@]}"; do
  if [ ! -e "$resources/$part" ] && [ ! -e "$app/Contents/Frameworks/$part" ]; then
    echo "make_dmg.sh: the app lacks $part" >&2; exit 1
  fi
done
/usr/libexec/PlistBuddy -c "Set :CFBundleShortVersionString $version" "$app/Contents/Info.plist"
codesign --force --deep --sign "${CODESIGN_IDENTITY:--}" "$app"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
cp -R "$app" "$staging/"
ln -s /Applications "$staging/Applications"
rm -f "$dmg"
hdiutil create -volname "PhoneBuddy $version" -srcfolder "$staging" -ov -format UDZO "$dmg"
echo "make_dmg.sh: wrote $dmg"
