#!/bin/sh
# Installs MCP Sandbox for the current user from this unpacked tarball:
# both programs to ~/.local/bin, a menu entry and icons to ~/.local/share,
# then starts the tray, which sets up Claude Desktop and Cursor on its
# first start. No root needed.
#
#   ./install.sh               install (or update) and start the tray
#   ./install.sh --no-start    install only
#   ./install.sh --uninstall   remove what install.sh put there
#   ./install.sh --prefix DIR  use DIR/bin and DIR/share instead of ~/.local
#
# Your settings (~/.config/mcp-sandbox) and state (~/.local/state/mcp-sandbox)
# are never touched, not even by --uninstall, which removes every file and
# every (then empty) directory that install.sh made, and the mcp-sandbox
# entry from your AI clients' configs where it runs this copy (each config
# is backed up first; an entry you pointed at another program stays).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix=$HOME/.local
action=install
start=yes
while [ $# -gt 0 ]; do
  case $1 in
    --uninstall) action=uninstall ;;
    --no-start) start=no ;;
    --prefix) shift; prefix=${1:?--prefix needs a directory} ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

bin=$prefix/bin
share=$prefix/share
desktop=$share/applications/@APP_ID@.desktop
manifest=$share/mcp-sandbox/installed-files
# The directories install.sh made (not those that were there before), so
# that --uninstall leaves no empty ones behind.
dirlist=$share/mcp-sandbox/installed-dirs

refresh_menus() {
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$share/applications" 2>/dev/null || true
  fi
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$share/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -t "$share/icons/hicolor" 2>/dev/null || true
  fi
}

if [ "$action" = uninstall ]; then
  [ -f "$manifest" ] || { echo "install.sh: nothing installed under $prefix (no $manifest)" >&2; exit 1; }
  pkill -u "$(id -u)" -x mcp-sandbox-tray 2>/dev/null || true
  # The AI clients' entries that run this copy (backed up first); an entry
  # that runs another program stays.
  if [ -x "$bin/mcp-sandbox" ]; then
    "$bin/mcp-sandbox" clients uninstall --all --if-command "$bin/mcp-sandbox" 2>&1 |
      grep -e ': removed the entry' -e ': left the ' -e 'mcp-sandbox: ' || true
  fi
  while IFS= read -r f; do rm -f "$f"; done <"$manifest"
  rm -f "$manifest"
  refresh_menus
  made=""
  if [ -f "$dirlist" ]; then
    made=$(sort -r "$dirlist") # deepest first
    rm -f "$dirlist"
  fi
  rmdir "$share/mcp-sandbox" 2>/dev/null || true
  # A directory that still holds someone else's files stays. The desktop's
  # caches, regenerated above, do not count.
  printf '%s\n' "$made" | while IFS= read -r d; do
    [ -n "$d" ] && [ -d "$d" ] || continue
    for c in mimeinfo.cache icon-theme.cache; do
      if [ -f "$d/$c" ] && [ "$(ls -A "$d")" = "$c" ]; then rm -f "$d/$c"; fi
    done
    rmdir "$d" 2>/dev/null || true
  done
  echo "MCP Sandbox removed from $prefix. Settings in ~/.config/mcp-sandbox are kept."
  exit 0
fi

made=$(mktemp)
trap 'rm -f "$made"' EXIT
mkd() { # mkd DIR: mkdir -p, noting each directory it makes
  [ -d "$1" ] && return 0
  mkd "$(dirname "$1")"
  [ -d "$1" ] || { mkdir "$1" && echo "$1" >>"$made"; }
}
mkd "$bin"
mkd "$share/applications"
mkd "$share/mcp-sandbox"
: >"$manifest.new"
put() { # put SRC DEST MODE
  mkd "$(dirname "$2")"
  # Copy beside, then rename: a running tray keeps its old file.
  cp "$1" "$2.new" && chmod "$3" "$2.new" && mv -f "$2.new" "$2"
  echo "$2" >>"$manifest.new"
}
put "$here/bin/mcp-sandbox" "$bin/mcp-sandbox" 755
put "$here/bin/mcp-sandbox-tray" "$bin/mcp-sandbox-tray" 755
put "$here/bin/mcp-sandbox-window" "$bin/mcp-sandbox-window" 755
(cd "$here/share/icons" && find . -type f | sed 's|^\./||') | while IFS= read -r f; do
  put "$here/share/icons/$f" "$share/icons/$f" 644
done
# The menu entry names the tray by absolute path: ~/.local/bin is not on
# every desktop's PATH.
sed -e "s|^Exec=.*|Exec=\"$bin/mcp-sandbox-tray\"|" -e "s|^TryExec=.*|TryExec=$bin/mcp-sandbox-tray|" \
  "$here/share/applications/@APP_ID@.desktop" >"$desktop.new"
mv -f "$desktop.new" "$desktop"
echo "$desktop" >>"$manifest.new"
mv -f "$manifest.new" "$manifest"
# An update keeps what an earlier install made.
[ -f "$dirlist" ] && cat "$dirlist" >>"$made"
sort -u "$made" >"$dirlist.new" && mv -f "$dirlist.new" "$dirlist"
refresh_menus

echo "MCP Sandbox $("$bin/mcp-sandbox" version) installed in $bin."
case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "Note: $bin is not on your PATH; add it to use mcp-sandbox from a terminal." ;;
esac
if [ "$start" = yes ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  pkill -u "$(id -u)" -x mcp-sandbox-tray 2>/dev/null && sleep 1 || true
  nohup "$bin/mcp-sandbox-tray" >/dev/null 2>&1 &
  echo "The tray is starting; it configures Claude Desktop and Cursor on its first start."
else
  echo "Start it from your applications menu (MCP Sandbox), or run: $bin/mcp-sandbox-tray"
fi
echo "Check the set-up any time with: $bin/mcp-sandbox doctor"
