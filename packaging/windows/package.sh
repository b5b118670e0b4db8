# The Windows target of packaging/build.sh (sourced): both executables
# cross-built from Linux with icon, manifest and version resources, then
# the per-user NSIS installer; all of them Authenticode-signed when
# MCP_SANDBOX_SIGN_PFX names a certificate (see sign.sh).
# shellcheck shell=bash

WIN_CC=${WIN_CC:-x86_64-w64-mingw32-gcc}
WINDRES=${WINDRES:-x86_64-w64-mingw32-windres}

windows_target() {
  local w=$WORK/windows
  rm -rf "$w" && mkdir -p "$w/out"
  for t in "$WIN_CC" "$WINDRES" makensis; do
    command -v "$t" >/dev/null || die "$t is missing (apt-get install gcc-mingw-w64-x86-64-posix nsis)"
  done
  # The Go linker takes resources only from a .syso in the package's own
  # directory, so the two are placed there for the build and removed after
  # (the _windows_amd64 suffix keeps every other build from seeing them).
  exec 9>"$DIST/.windows.lock"
  if command -v flock >/dev/null; then flock 9; fi
  WIN_SYSO=()
  trap 'rm -f "${WIN_SYSO[@]}"' EXIT
  step "windows: resources" windows_resources "$w"
  step "windows: build mcp-sandbox.exe (pure Go, console)" \
    server_build "$w/out/mcp-sandbox.exe" windows amd64
  step "windows: build mcp-sandbox-tray.exe (cgo, GUI)" \
    gobuild "$w/out/mcp-sandbox-tray.exe" ./cmd/mcp-sandbox-tray "$TRAY_LDFLAGS -H=windowsgui" \
    CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC="$WIN_CC"
  step "windows: build mcp-sandbox-window.exe (cgo, GUI)" \
    gobuild "$w/out/mcp-sandbox-window.exe" ./cmd/mcp-sandbox-window "$TRAY_LDFLAGS -H=windowsgui" \
    CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC="$WIN_CC" GOFLAGS="$WINDOW_GOFLAGS"
  rm -f "${WIN_SYSO[@]}"
  exec 9>&-
  cp "$ROOT/assets/mcp-sandbox.ico" "$w/out/"
  step "windows: sign the programs" "$PKG/windows/sign.sh" "$w/out/mcp-sandbox.exe" "$w/out/mcp-sandbox-tray.exe"
  step "windows: NSIS installer" windows_installer "$w"
  step "windows: sign the installer" "$PKG/windows/sign.sh" "$SETUP_FILE"
}

# windows_resources W: one .syso for each executable, in its package dir.
windows_resources() {
  local w=$1 file_version flags=0
  file_version=$(IFS=.; echo "${VERSION_NUMS[*]}.$BUILD")
  [[ -n $PRERELEASE ]] && flags=VS_FF_PRERELEASE
  cp "$ROOT/assets/mcp-sandbox.ico" "$w/mcp-sandbox.ico"
  local name desc dir
  for name in mcp-sandbox mcp-sandbox-tray mcp-sandbox-window; do
    case $name in
      mcp-sandbox) desc="$APP_NAME server and command line" ;;
      *) desc="$APP_NAME" ;;
    esac
    fill "$PKG/windows/app.manifest.in" "$w/$name.manifest" \
      APP_ID="$APP_ID" NAME="$name" FILE_VERSION="$file_version" DESCRIPTION="$desc"
    fill "$PKG/windows/resources.rc.in" "$w/$name.rc" \
      NAME="$name" APP_NAME="$APP_NAME" DESCRIPTION="$desc" VERSION="$VERSION" COMMIT="$COMMIT" \
      FILE_VERSION_COMMAS="${file_version//./,}" FILE_FLAGS="$flags" \
      ICON=mcp-sandbox.ico MANIFEST="$name.manifest"
    dir=$ROOT/cmd/$name
    WIN_SYSO+=("$dir/zz_packaging_windows_amd64.syso")
    (cd "$w" && "$WINDRES" -O coff -i "$name.rc" -o "$dir/zz_packaging_windows_amd64.syso")
  done
  WIN_FILE_VERSION=$file_version
}

windows_installer() {
  local w=$1
  SETUP_FILE=$DIST/mcp-sandbox-$VERSION-windows-amd64-setup.exe
  # With a certificate, NSIS signs the uninstaller it embeds (!uninstfinalize).
  local sign=()
  [[ -n ${MCP_SANDBOX_SIGN_PFX:-} ]] && sign=(-DSIGN="$PKG/windows/sign.sh")
  makensis -V2 -INPUTCHARSET UTF8 "${sign[@]}" \
    -DVERSION="$VERSION" -DFILE_VERSION="$WIN_FILE_VERSION" -DCOMMIT="$COMMIT" \
    -DAPP_ID="$APP_ID" -DSRC="$w/out" -DOUTFILE="$SETUP_FILE" \
    "$PKG/windows/installer.nsi" >"$w/makensis.log" ||
    { cat "$w/makensis.log" >&2; die "makensis failed"; }
  log "wrote $SETUP_FILE"
}
