#!/usr/bin/env bash
# Checks the release files in dist/ the way a person meets them, after
# packaging/build.sh made them:
#
#   packaging/check.sh linux    the .deb installed with dpkg (root) and run from /usr/bin,
#                               the tray launched under Xvfb, removed and purged;
#                               the tarball installed and uninstalled for a scratch user;
#                               the .deb installed, used, removed and purged in a clean
#                               Debian 12 container (linux/container-check.sh)
#   packaging/check.sh windows  the exe types, resources and the installer's file list
#   packaging/check.sh darwin   the Mach-O binaries, the Info.plist, the icon
#   packaging/check.sh feed     a signed update feed over the files, verified and tampered with
#
# Needs: dpkg, desktop-file-validate, xvfb-run, 7z (p7zip-full), objdump,
# icns2png, python3. Every check fails loudly; nothing is skipped.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
. "$PKG/linux/package.sh" # LINUX_DEPENDS

fail() { printf 'check FAILED: %s\n' "$*" >&2; exit 1; }
ok() { printf '  ok  %s\n' "$*" >&2; }

# json FILE EXPR: evaluates a Python expression over the JSON in FILE (as j).
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# scratch_home: an empty home with a config and state file of the user's
# own, which nothing may change. Sets H.
scratch_home() {
  H=$(mktemp -d -p "$T")
  mkdir -p "$H/.config/mcp-sandbox" "$H/.local/state/mcp-sandbox"
  # The images are the test images .ci/setup-host loads: this machine has no
  # registry, and the doctor fails (exit 1) while a language cannot run.
  printf '[limits]\nmemory_mb = 768\n[images]\npython = "%s"\njavascript = "%s"\nbash = "%s"\n' \
    mcp-sandbox-test/python:3 mcp-sandbox-test/node:18 mcp-sandbox-test/python:3 >"$H/.config/mcp-sandbox/config.toml"
  echo keep >"$H/.local/state/mcp-sandbox/keep-me"
  snapshot_user_files
}

# snapshot_user_files records the user's files, which from now on nothing
# may change.
snapshot_user_files() {
  (cd "$H" && find .config .local/state -type f -exec sha256sum {} + | sort) >"$H.before"
}

user_files_unchanged() {
  (cd "$H" && find .config .local/state -type f -exec sha256sum {} + | sort) | diff -u "$H.before" - >&2 ||
    fail "$1 changed the user's config or state"
  grep -q 'memory_mb = 768' "$H/.config/mcp-sandbox/config.toml" || fail "$1 rewrote the config"
  ok "$1 left ~/.config/mcp-sandbox and the state dir alone"
}

# check_doctor BIN HOME: runs the doctor from BIN; exit 0 with an engine
# (and every language's image) when Docker answers here, else exit 1 with docker.chosen null. Sets DOC.
check_doctor() {
  local bin=$1 code=0
  DOC=$(mktemp -p "$T")
  HOME=$2 XDG_CONFIG_HOME='' XDG_STATE_HOME='' XDG_DATA_HOME='' "$bin" doctor --json >"$DOC" || code=$?
  HOME=$2 XDG_CONFIG_HOME='' XDG_STATE_HOME='' XDG_DATA_HOME='' "$bin" doctor >/dev/null || true
  if docker info >/dev/null 2>&1; then
    [[ $code == 0 && $(json "$DOC" 'j["docker"]["chosen"] is not None') == True ]] ||
      fail "doctor from $bin: exit $code with Docker running: $(cat "$DOC")"
  else
    [[ $code == 1 && $(json "$DOC" 'j["docker"]["chosen"]') == None ]] ||
      fail "doctor from $bin without Docker: exit $code: $(cat "$DOC")"
  fi
  [[ $(json "$DOC" 'j["config"]["valid"]') == True ]] || fail "doctor: config not valid"
  ok "doctor from $bin (exit $code)"
}

# check_version BIN: `version` and `version --json` name this build.
check_version() {
  local out
  out=$("$1" version)
  [[ $out == "mcp-sandbox $VERSION ($COMMIT, linux/amd64,"* ]] || fail "$1 version: $out"
  HOME=$H "$1" version --json >"$H.v"
  [[ $(json "$H.v" 'j["version"]') == "$VERSION" && $(json "$H.v" 'j["commit"]') == "$COMMIT" ]] || fail "version --json: $(cat "$H.v")"
  ok "$out"
}

check_linux() {
  local deb=$DIST/mcp-sandbox_${VERSION}_amd64.deb x
  [[ -f $deb ]] || fail "$deb missing (run packaging/build.sh linux)"
  x=$(mktemp -d -p "$T")
  # What is in it, exactly.
  dpkg-deb -c "$deb" | awk '{print $NF}' | grep -v '/$' | sort >"$x/list"
  {
    printf '%s\n' ./usr/bin/mcp-sandbox ./usr/bin/mcp-sandbox-tray ./usr/bin/mcp-sandbox-window \
      "./usr/share/applications/$APP_ID.desktop" ./usr/share/doc/mcp-sandbox/copyright \
      ./usr/share/icons/hicolor/scalable/apps/mcp-sandbox.svg
    for s in 16 24 32 48 64 128 256 512; do echo "./usr/share/icons/hicolor/${s}x$s/apps/mcp-sandbox.png"; done
  } | sort | diff -u - "$x/list" >&2 || fail ".deb file list"
  ok ".deb holds the three programs, the menu entry, icons 16-512 and SVG, the copyright"
  [[ $(dpkg-deb -f "$deb" Version) == "$DEB_VERSION" && $(dpkg-deb -f "$deb" Architecture) == amd64 ]] || fail ".deb version/arch"
  [[ $(dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -E 'preinst|postinst|prerm|postrm' | tr '\n' ' ') == './prerm ' ]] ||
    fail ".deb's maintainer scripts: $(dpkg-deb --ctrl-tarfile "$deb" | tar -t | tr '\n' ' ') (only prerm, which cleans the AI clients)"
  # Every library the window links must come from a package it depends on
  # (the tray links none beyond libc).
  dpkg-deb -x "$deb" "$x/root"
  local depends lib pkg
  depends=$(dpkg-deb -f "$deb" Depends)
  for lib in $(objdump -p "$x/root/usr/bin/mcp-sandbox-window" | awk '/NEEDED/ {print $2}'); do
    pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -1 | cut -d: -f1)
    [[ -n $pkg ]] || fail "no package provides $lib here"
    [[ ", $depends," == *", $pkg"[,\ ]* ]] || fail "window needs $lib from $pkg, not in Depends: $depends"
  done
  ok "Depends covers every linked library: $depends"
  # A Docker package in Depends or Recommends lets apt replace the user's
  # engine (docker.io conflicts with Docker Desktop's docker-ce-cli).
  dpkg-deb -f "$deb" Pre-Depends Depends Recommends | grep -Eiq 'docker|containerd|podman|runc' &&
    fail ".deb depends on or recommends a container engine: $(dpkg-deb -f "$deb" Depends Recommends)"
  ok ".deb neither depends on nor recommends a container engine (Suggests: $(dpkg-deb -f "$deb" Suggests))"
  "$PKG/linux/simulate-desktop.sh" "$deb" >"$x/sim" 2>&1 || fail "apt beside Docker Desktop: $(cat "$x/sim")"
  ok "apt install of the .deb beside Docker Desktop for Linux (simulated) removes nothing"
  file "$x/root/usr/bin/mcp-sandbox" | grep -q 'statically linked' || fail "server is not static"
  desktop-file-validate "$x/root/usr/share/applications/$APP_ID.desktop" || fail "desktop-file-validate (packaged)"

  # Install, use, remove, purge: as root, with a scratch user's home.
  scratch_home
  if dpkg-query -W -f='${Status}' mcp-sandbox 2>/dev/null | grep -q installed; then dpkg -r mcp-sandbox >/dev/null; fi
  HOME=$H dpkg -i "$deb" >/dev/null || fail "dpkg -i"
  [[ $(command -v mcp-sandbox) == /usr/bin/mcp-sandbox && $(command -v mcp-sandbox-tray) == /usr/bin/mcp-sandbox-tray ]] ||
    fail "not on PATH after dpkg -i"
  ok "dpkg -i: mcp-sandbox and mcp-sandbox-tray on PATH"
  check_version /usr/bin/mcp-sandbox
  [[ $(/usr/bin/mcp-sandbox-tray --version 2>/dev/null) == "mcp-sandbox-tray $VERSION ($COMMIT"* ]] || fail "tray --version"
  desktop-file-validate "/usr/share/applications/$APP_ID.desktop" || fail "desktop-file-validate (installed)"
  ok "desktop-file-validate /usr/share/applications/$APP_ID.desktop"
  check_doctor /usr/bin/mcp-sandbox "$H"
  [[ $(json "$DOC" 'j["install"]["installed"] and j["install"]["tray"]') == /usr/bin/mcp-sandbox-tray &&
     $(json "$DOC" 'j["install"]["menu_entry"]') == "/usr/share/applications/$APP_ID.desktop" &&
     $(json "$DOC" 'j["install"].get("missing_libraries", [])') == '[]' ]] ||
    fail "doctor's install section: $(json "$DOC" 'j["install"]')"
  ok "doctor finds the tray, its libraries and the menu entry"
  check_launch /usr/bin/mcp-sandbox-tray /usr/bin/mcp-sandbox
  snapshot_user_files # the tray has written its state; removal must keep it
  HOME=$H dpkg -r mcp-sandbox >/dev/null || fail "dpkg -r"
  for f in /usr/bin/mcp-sandbox /usr/bin/mcp-sandbox-tray "/usr/share/applications/$APP_ID.desktop" \
    /usr/share/icons/hicolor/48x48/apps/mcp-sandbox.png; do
    [[ ! -e $f ]] || fail "$f left after dpkg -r"
  done
  HOME=$H dpkg -P mcp-sandbox >/dev/null 2>&1 || true
  dpkg-query -W -f='${Status}' mcp-sandbox 2>/dev/null | grep -q installed && fail "still installed"
  ok "dpkg -r and -P removed every file"
  user_files_unchanged "dpkg -r and -P"
  check_tarball
  # The .deb in a clean Debian 12 without a network: apt install, two
  # users' Claude entries, an upgrade, remove and purge (see the script).
  "$PKG/linux/container-check.sh" "$deb" "$(deb_test_image)" >"$x/container" 2>&1 ||
    { cat "$x/container" >&2; fail "the .deb in a clean Debian 12 container"; }
  sed 's/^/    /' "$x/container" >&2
  ok "the .deb installed, used by two users, upgraded, removed and purged in a clean Debian 12 container"
  rm -rf "$x"
}

# check_launch TRAY SERVER: the tray starts on a display (Xvfb) and keeps
# running, and finds its server next to itself.
check_launch() {
  local code=0 log
  HOME=$H XDG_CONFIG_HOME='' XDG_STATE_HOME='' LANG=C.UTF-8 timeout 8 xvfb-run -a "$1" >/dev/null 2>&1 || code=$?
  [[ $code == 124 ]] || fail "$1 exited ($code) instead of running"
  # timeout ended xvfb-run; the tray and the window it opened may still be
  # quitting and writing their logs: wait for them (then make sure) before
  # anything compares the user's files.
  local procs
  procs="^$(dirname "$1")/mcp-sandbox-(tray|window)( |\$)"
  for _ in $(seq 1 100); do
    pgrep -f "$procs" >/dev/null || break
    sleep 0.2
  done
  pkill -KILL -f "$procs" 2>/dev/null || true
  log=$H/.local/state/mcp-sandbox/logs/tray.log
  grep -q "msg=starting version=\"$VERSION " "$log" || fail "tray log: no start of $VERSION: $(head -5 "$log")"
  grep -q "msg=\"bundled server\" path=$2 " "$log" || fail "tray did not find $2: $(grep bundled "$log")"
  ok "tray launched under Xvfb, ran 8 s, found its server $2"
}

check_tarball() {
  local tar=$DIST/mcp-sandbox-$VERSION-linux-amd64.tar.xz x
  [[ -f $tar ]] || fail "$tar missing"
  x=$(mktemp -d -p "$T")
  tar -C "$x" -xJf "$tar"
  local d=$x/mcp-sandbox-$VERSION-linux-amd64
  [[ -x $d/install.sh && -x $d/bin/mcp-sandbox && -x $d/bin/mcp-sandbox-tray && -x $d/bin/mcp-sandbox-window && -f $d/README.txt ]] || fail "tarball contents"
  scratch_home
  HOME=$H PATH=/usr/bin:/bin DISPLAY='' WAYLAND_DISPLAY='' "$d/install.sh" >"$x/out" || fail "install.sh: $(cat "$x/out")"
  local desk=$H/.local/share/applications/$APP_ID.desktop
  [[ -x $H/.local/bin/mcp-sandbox && -x $H/.local/bin/mcp-sandbox-tray && -f $H/.local/share/icons/hicolor/64x64/apps/mcp-sandbox.png ]] ||
    fail "install.sh did not install the files"
  grep -qx "Exec=\"$H/.local/bin/mcp-sandbox-tray\"" "$desk" || fail "menu entry's Exec: $(grep Exec "$desk")"
  desktop-file-validate "$desk" || fail "desktop-file-validate (tarball install)"
  grep -q "not on your PATH" "$x/out" || fail "install.sh did not say ~/.local/bin is off PATH"
  ok "install.sh: programs in ~/.local/bin, valid menu entry with absolute Exec, icons"
  check_version "$H/.local/bin/mcp-sandbox"
  check_doctor "$H/.local/bin/mcp-sandbox" "$H"
  [[ $(json "$DOC" 'j["install"]["menu_entry"]') == "$desk" ]] || fail "doctor: $(json "$DOC" 'j["install"]')"
  mkdir -p "$H/.cursor"
  HOME=$H XDG_CONFIG_HOME='' "$H/.local/bin/mcp-sandbox" clients install --client cursor >/dev/null || fail "clients install"
  grep -q "\"$H/.local/bin/mcp-sandbox\"" "$H/.cursor/mcp.json" || fail "cursor entry: $(cat "$H/.cursor/mcp.json")"
  HOME=$H XDG_CONFIG_HOME='' "$d/install.sh" --uninstall >"$x/out" || fail "install.sh --uninstall"
  grep -q "^cursor: removed the entry from $H/.cursor/mcp.json, backup " "$x/out" || fail "install.sh --uninstall said: $(cat "$x/out")"
  grep -q mcp-sandbox "$H/.cursor/mcp.json" && fail "Cursor's entry left: $(cat "$H/.cursor/mcp.json")"
  ok "install.sh --uninstall removed Cursor's entry (backed up) and said so"
  # ~/.local/bin and ~/.local/share were made by install.sh here: nothing
  # of them may be left, not even an empty directory or a menu cache.
  local left
  left=$(find "$H/.local/bin" "$H/.local/share" 2>/dev/null || true)
  [[ -z $left ]] || fail "uninstall left $left"
  ok "install.sh --uninstall removed every file and directory it made"
  user_files_unchanged "install.sh and --uninstall"
  rm -rf "$x"
}

check_windows() {
  local setup=$DIST/mcp-sandbox-$VERSION-windows-amd64-setup.exe out=$WORK/windows/out x name
  [[ -f $setup ]] || fail "$setup missing (run packaging/build.sh windows)"
  file -b "$out/mcp-sandbox-tray.exe" | grep -q '^PE32+ executable (GUI) x86-64' || fail "tray exe: $(file -b "$out/mcp-sandbox-tray.exe")"
  file -b "$out/mcp-sandbox-window.exe" | grep -q '^PE32+ executable (GUI) x86-64' || fail "window exe: $(file -b "$out/mcp-sandbox-window.exe")"
  file -b "$out/mcp-sandbox.exe" | grep -q '^PE32+ executable (console) x86-64' || fail "server exe: $(file -b "$out/mcp-sandbox.exe")"
  # The installer itself is 64-bit (Target amd64-unicode): it runs where
  # 32-bit code cannot.
  file -b "$setup" | grep -q '^PE32+ executable (GUI) x86-64' || fail "setup is not 64-bit: $(file -b "$setup")"
  7z l "$setup" | grep -qx 'SubType = NSIS-3 Unicode 64-bit' || fail "setup is not a 64-bit NSIS installer: $(7z l "$setup" | grep Type)"
  ok "tray exe is PE32+ GUI (no console), server exe PE32+ console, setup is a 64-bit NSIS installer"
  x=$(mktemp -d -p "$T")
  for name in mcp-sandbox-tray mcp-sandbox-window mcp-sandbox; do
    7z x -y -o"$x/$name" "$out/$name.exe" .rsrc >/dev/null || fail "$name.exe has no resources"
    iconv -f UTF-16LE -t UTF-8 "$x/$name/.rsrc/version.txt" | tr -d '\r' >"$x/$name.version"
    grep -Eq "\"FileVersion\", +\"$VERSION\"" "$x/$name.version" &&
      grep -Eq "\"ProductVersion\", +\"$VERSION \($COMMIT\)\"" "$x/$name.version" &&
      grep -Eq "\"OriginalFilename\", +\"$name.exe\"" "$x/$name.version" || fail "$name.exe version resource: $(cat "$x/$name.version")"
    [[ $(find "$x/$name/.rsrc/ICON" -type f | wc -l) == 6 ]] || fail "$name.exe: icon sizes"
    grep -q 'level="asInvoker"' "$x/$name/.rsrc/MANIFEST/1" || fail "$name.exe manifest"
  done
  ok "every exe carries version $VERSION ($COMMIT), the 6-size icon and an asInvoker manifest"
  7z l -ba "$setup" | awk '{print $NF}' | grep -v '^\$PLUGINSDIR' | sort >"$x/list"
  printf '%s\n' Uninstall.exe mcp-sandbox-tray.exe mcp-sandbox-window.exe mcp-sandbox.exe | sort | diff -u - "$x/list" >&2 || fail "installer file list"
  7z x -y -o"$x/setup" "$setup" mcp-sandbox-tray.exe mcp-sandbox-window.exe mcp-sandbox.exe >/dev/null
  for name in mcp-sandbox-tray.exe mcp-sandbox-window.exe mcp-sandbox.exe; do
    cmp -s "$x/setup/$name" "$out/$name" || fail "installer's $name is not the one just built"
  done
  ok "installer holds exactly mcp-sandbox-tray.exe, mcp-sandbox-window.exe, mcp-sandbox.exe and its uninstaller, as built"
  grep -qi 'warning' "$out/../makensis.log" && fail "makensis warnings: $(grep -i warning "$out/../makensis.log")"
  for want in 'InstallDir "$LOCALAPPDATA\Programs\${APP}"' 'RequestExecutionLevel user' 'MUI_FINISHPAGE_RUN' \
    'CreateShortcut "$SMPROGRAMS' 'WriteUninstaller' 'DeleteRegValue HKCU "${RUN_KEY}"' \
    'Call PathAdd' 'Call un.PathRemove' 'clients uninstall --all' 'RMDir /r "$APPDATA\fyne\${APP_ID}"'; do
    grep -qF "$want" "$PKG/windows/installer.nsi" || fail "installer.nsi lacks: $want"
  done
  ok "per-user install to %LOCALAPPDATA%\\Programs, user PATH, Start-menu shortcuts, uninstaller (client entries, Fyne data), optional start"
  rm -rf "$x"
}

check_darwin() {
  local arch bin want
  for arch in amd64 arm64; do
    bin=$DIST/mcp-sandbox-$VERSION-darwin-$arch
    [[ -f $bin ]] || fail "$bin missing (run packaging/build.sh darwin)"
    want=x86_64
    [[ $arch == arm64 ]] && want=arm64
    file -b "$bin" | grep -q "^Mach-O 64-bit $want executable" || fail "$bin: $(file -b "$bin")"
    # -trimpath keeps -ldflags out of the build info: look for the stamps.
    grep -aq "$COMMIT" "$bin" && grep -aq "$DATE" "$bin" || fail "$bin: commit and date not stamped"
    go version -m "$bin" | grep -q 'CGO_ENABLED=0' || fail "$bin: not pure Go"
    ok "$(basename "$bin"): Mach-O $want, pure Go, commit $COMMIT stamped"
  done
  local plist=$WORK/darwin/Info.plist
  python3 - "$plist" "$APP_ID" "$VERSION" "$BUILD" <<'PY' || fail "Info.plist"
import plistlib, sys
p = plistlib.load(open(sys.argv[1], "rb"))
want = {"CFBundleIdentifier": sys.argv[2], "CFBundleShortVersionString": sys.argv[3],
        "CFBundleVersion": sys.argv[4], "CFBundleExecutable": "mcp-sandbox-tray",
        "CFBundleIconFile": "mcp-sandbox", "CFBundlePackageType": "APPL", "LSUIElement": True}
bad = {k: (p.get(k), v) for k, v in want.items() if p.get(k) != v}
if bad:
    sys.exit(f"Info.plist: {bad}")
PY
  ok "Info.plist: $APP_ID $VERSION ($BUILD), LSUIElement (menu bar only)"
  icns2png -l "$WORK/darwin/mcp-sandbox.icns" | grep -Eo ' [0-9]+x[0-9]+ ' | sort -u | tr -d ' ' | sort -n |
    tr '\n' ' ' | grep -q '^16x16 32x32 128x128 256x256 512x512 1024x1024 $' || fail "icns sizes"
  ok "icns holds 16 to 1024 px"
}

check_feed() {
  local x files
  x=$(mktemp -d -p "$T")
  files=("$DIST"/mcp-sandbox_"$VERSION"_amd64.deb "$DIST"/mcp-sandbox-"$VERSION"-*.tar.xz
    "$DIST"/mcp-sandbox-"$VERSION"-*-setup.exe "$DIST"/mcp-sandbox-"$VERSION"-darwin-{amd64,arm64})
  (cd "$ROOT" && go build -o "$x/signrelease" ./packaging/cmd/signrelease)
  local pub
  pub=$("$x/signrelease" keygen -o "$x/key" 2>/dev/null)
  "$x/signrelease" feed -key "$x/key" -version "$VERSION" -o "$x/feed.json" "${files[@]}"
  "$x/signrelease" verify -pub "$pub" -dir "$DIST" "$x/feed.json" 2>/dev/null || fail "feed does not verify"
  [[ $(json "$x/feed.json" 'len(j["artifacts"])') == "${#files[@]}" ]] || fail "feed artifacts"
  ok "signed feed over ${#files[@]} files verifies against the files"
  mkdir "$x/tampered"
  cp "${files[0]}" "$x/tampered/" && printf 'x' >>"$x/tampered/$(basename "${files[0]}")"
  for f in "${files[@]:1}"; do ln -s "$f" "$x/tampered/"; done
  "$x/signrelease" verify -pub "$pub" -dir "$x/tampered" "$x/feed.json" 2>/dev/null && fail "a tampered file verified"
  local other
  other=$("$x/signrelease" keygen -o "$x/key2" 2>/dev/null)
  "$x/signrelease" verify -pub "$other" "$x/feed.json" 2>/dev/null && fail "verified with another key"
  ok "a tampered file and a foreign key are refused"
  (cd "$DIST" && sha256sum "${files[@]##*/}" >"$x/SHA256SUMS" && sha256sum -c --quiet "$x/SHA256SUMS") || fail "sha256sum"
  rm -rf "$x"
}

[[ $# -ge 1 ]] || die "usage: packaging/check.sh linux|windows|darwin|feed..."
init_release >/dev/null 2>&1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for t in "$@"; do
  log "check $t"
  "check_$t"
done
