#!/bin/sh
# Install the unpacked PhoneBuddy folder for the current user: a launcher in ~/.local/bin, the menu entry
# and the icon. Run it from inside the unpacked folder: ./install.sh   (./install.sh --remove undoes it)
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
bin="${HOME}/.local/bin"
apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
id=org.phonebuddy.PhoneBuddy
if [ "${1:-}" = "--remove" ]; then
  rm -f "$bin/phonebuddy" "$apps/$id.desktop" "$icons/$id.png"
  echo "PhoneBuddy removed from the menu (the folder $here is left as it is)."
  exit 0
fi
mkdir -p "$bin" "$apps" "$icons"
ln -sf "$here/phonebuddy" "$bin/phonebuddy"
sed "s|^Exec=phonebuddy|Exec=\"$here/phonebuddy\"|" "$here/share/applications/$id.desktop" > "$apps/$id.desktop"
cp "$here/share/icons/hicolor/256x256/apps/$id.png" "$icons/$id.png"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" || true
echo "PhoneBuddy installed: find it in the menu under Accessibility, or run: phonebuddy"
echo "Check the installation at any time with: phonebuddy --self-check"
