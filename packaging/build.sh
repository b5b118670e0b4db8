#!/usr/bin/env bash
# Builds MCP Sandbox's release files into dist/ (sandbox/README.md §Command line and packaging):
#
#   packaging/build.sh linux    mcp-sandbox_<v>_amd64.deb, mcp-sandbox-<v>-linux-amd64.tar.xz
#   packaging/build.sh windows  mcp-sandbox-<v>-windows-amd64-setup.exe (cross-built, mingw + NSIS)
#   packaging/build.sh darwin   mcp-sandbox-<v>-darwin-{amd64,arm64}; on a Mac also
#                               "MCP Sandbox.app" and mcp-sandbox-<v>-darwin-universal.dmg
#   packaging/build.sh all      the three
#
# The version is FyneApp.toml's (MCP_SANDBOX_VERSION overrides it), the
# commit `git describe`'s; both are stamped into both binaries, as
# `mcp-sandbox version` shows. MCP_SANDBOX_UPDATE_PUBLIC_KEY, when set, is
# the release key the tray's update check trusts. DIST_DIR moves dist/.
# Builds reuse the Go build cache (GOCACHE), so a second run is quick; each
# step's time is printed at the end.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$PKG/linux/package.sh"
. "$PKG/windows/package.sh"
. "$PKG/darwin/package.sh"

[[ $# -ge 1 ]] || die "usage: packaging/build.sh linux|windows|darwin|all"
targets=("$@")
[[ $1 == all ]] && targets=(linux windows darwin)

init_release
for t in "${targets[@]}"; do
  case $t in
    linux) linux_target ;;
    windows) windows_target ;;
    darwin) darwin_target ;;
    *) die "unknown target $t (linux, windows, darwin or all)" ;;
  esac
done
print_times
log "artifacts in $DIST:"
(cd "$DIST" && ls -l -- *.deb *.tar.xz *.exe *.dmg mcp-sandbox-*-darwin-* 2>/dev/null | sed 's/^/  /') >&2 || true
