#!/usr/bin/env bash
# Installs the shipped Windows installer under Wine, as a user would, and
# checks what it did and what its uninstaller leaves (issue 14):
#
#   packaging/windows/test/wine.sh [SETUP.EXE]   (default: dist/'s, after build.sh windows)
#
# A private Wine prefix under a temp dir on a private Xvfb (-displayfd);
# the test-only bcryptprimitives.dll stand-in (bcryptprimitives.c, built
# here with mingw, never shipped) in its system32, since Wine 8 lacks it
# and Go >= 1.22 programs import it. Then: the app/instance tests (named
# pipe) as a Windows test binary; the installer with /S; PATH, files and
# registry; `mcp-sandbox.exe version`, `doctor`, `clients install --client
# claude` against the profile's %APPDATA%\Claude\claude_desktop_config.json;
# the tray started (a screenshot of the root window into
# $MCP_SANDBOX_SCREENSHOT_DIR, default dist/ci/screenshots) and launched a
# second time (it must reach the first through the pipe); the uninstaller
# with /S; and what is left. Every check fails loudly.
#
# Needs: wine, wine64 (Debian 12's Wine 8), Xvfb, x86_64-w64-mingw32-gcc,
# import (imagemagick), xdotool, python3, go.
set -euo pipefail

# shellcheck source=packaging/lib.sh
. "$(dirname "$0")/../../lib.sh"
init_release >/dev/null 2>&1
SETUP=${1:-$DIST/mcp-sandbox-$VERSION-windows-amd64-setup.exe}
SHOTS=${MCP_SANDBOX_SCREENSHOT_DIR:-$DIST/ci/screenshots}

fail() { printf 'wine check FAILED: %s\n' "$*" >&2; exit 1; }
ok() { printf '  ok  %s\n' "$*" >&2; }
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

[[ -f $SETUP ]] || fail "$SETUP missing (run packaging/build.sh windows)"
for t in wine wineboot wineserver Xvfb x86_64-w64-mingw32-gcc import xdotool python3 go; do
  command -v "$t" >/dev/null || fail "$t is missing (apt-get install wine wine64 xvfb imagemagick xdotool gcc-mingw-w64-x86-64-posix)"
done

T=$(mktemp -d)
XVFB=
TRAY=
cleanup() {
  [[ -n $TRAY ]] && kill "$TRAY" 2>/dev/null
  WINEPREFIX=$T/prefix wineserver -k 2>/dev/null || true
  [[ -n $XVFB ]] && kill "$XVFB" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

# A private X server on a display it picks itself.
exec 8< <(exec Xvfb -displayfd 1 -noreset -screen 0 1280x800x24 -nolisten tcp 2>"$T/xvfb.log")
XVFB=$!
read -r -t 20 dpy <&8 || fail "Xvfb did not start: $(cat "$T/xvfb.log")"
export DISPLAY=:$dpy
export WINEPREFIX=$T/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
start=$SECONDS
wineboot -i >"$T/wineboot.log" 2>&1 || fail "wineboot: $(tail -5 "$T/wineboot.log")"
wineserver -w
ok "Wine $(wine --version) prefix made in $((SECONDS - start)) s on Xvfb $DISPLAY"

x86_64-w64-mingw32-gcc -shared -O2 -s -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  "$PKG/windows/test/bcryptprimitives.c" -ladvapi32
ok "test-only bcryptprimitives.dll (ProcessPrng) in the prefix's system32"

# winvar NAME: a Windows environment variable, and its Unix path in U.
winvar() { wine cmd /c "echo %$1%" 2>/dev/null | tr -d '\r'; }
unixpath() { winepath -u "$1" 2>/dev/null | tr -d '\r'; }
APPDATA_W=$(winvar APPDATA)
LOCAL_W=$(winvar LOCALAPPDATA)
APPDATA_U=$(unixpath "$APPDATA_W")
LOCAL_U=$(unixpath "$LOCAL_W")
INST_W="$LOCAL_W\\Programs\\MCP Sandbox"
INST="$LOCAL_U/Programs/MCP Sandbox"
[[ -d $APPDATA_U && -d $LOCAL_U ]] || fail "profile dirs: $APPDATA_W=$APPDATA_U $LOCAL_W=$LOCAL_U"

# regval KEY NAME: "TYPE<tab>DATA" of a registry value, or nothing.
regval() {
  wine reg query "$1" /v "$2" 2>/dev/null | tr -d '\r' |
    sed -n "s/^    $2    \(REG_[A-Z_]*\)    \(.*\)$/\1\t\2/p;s/^    $2    \(REG_[A-Z_]*\)    $/\1\t/p"
}
UNINSTALL_KEY='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\MCP Sandbox'
RUN_KEY='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'

# The single-instance tests, as a Windows test binary: the named pipe
# between two real processes.
(cd "$ROOT" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$T/instance.test.exe" ./app/instance)
wine "$T/instance.test.exe" -test.v -test.count=1 >"$T/instance.log" 2>&1 ||
  fail "app/instance tests under Wine: $(cat "$T/instance.log")"
ok "app/instance tests under Wine: $(grep -c -- '--- PASS' "$T/instance.log") passed, $(grep -c -- '--- SKIP' "$T/instance.log") skipped"
grep -B1 -- '--- SKIP' "$T/instance.log" | grep -v -- '--- SKIP' | sed 's/^/      /' >&2 || true

# The file fences on a Windows file system, as a Windows test binary:
# other case, 8.3 short names, the \\?\ form and alternate data streams
# of a denied file are refused by copy_in, and copy_out refuses the
# Startup folder and a client's config however they are spelled.
(cd "$ROOT" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$T/hostfs.test.exe" ./sandbox/hostfs)
wine "$T/hostfs.test.exe" -test.v -test.count=1 -test.run 'Windows' >"$T/hostfs.log" 2>&1 ||
  fail "sandbox/hostfs Windows spelling tests under Wine: $(cat "$T/hostfs.log")"
for t in TestDenyWindowsSpellings TestWriteDenyWindowsSpellings; do
  grep -q -- "--- PASS: $t" "$T/hostfs.log" || fail "$t did not pass under Wine: $(cat "$T/hostfs.log")"
done
grep -q 'LONG~' "$T/hostfs.log" || fail "no 8.3 short name was tried under Wine: $(cat "$T/hostfs.log")"
ok "sandbox/hostfs Windows spelling tests under Wine: case, short names, \\?\ and streams refused"

# Notifications (a balloon on the tray's notification-area icon, which
# Windows 10 and 11 show as a toast), as a Windows test binary: the
# tray's icon window is found and the shell takes the balloon on it.
(cd "$ROOT" && GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$T/trayapp.test.exe" ./app/trayapp)
wine "$T/trayapp.test.exe" -test.v -test.count=1 -test.run 'Balloon|NotifyIcon|SendNotification' >"$T/trayapp.log" 2>&1 ||
  fail "app/trayapp notification tests under Wine: $(cat "$T/trayapp.log")"
grep -q -- '--- PASS: TestSendNotificationWindows' "$T/trayapp.log" || fail "TestSendNotificationWindows did not run: $(cat "$T/trayapp.log")"
ok "app/trayapp notification tests under Wine: $(grep -c -- '^--- PASS' "$T/trayapp.log") passed (Shell_NotifyIcon took the balloons on the tray's icon)"

# The user's own PATH before: a %variable% and a trailing ";", which must
# come back byte for byte. And Claude Desktop, installed, with a server of
# the user's own in its config.
PATH_BEFORE='%USERPROFILE%\bin;C:\Tools;'
wine reg add 'HKCU\Environment' /v Path /t REG_EXPAND_SZ /d "$PATH_BEFORE" /f >/dev/null 2>&1
[[ $(regval 'HKCU\Environment' Path) == "REG_EXPAND_SZ	$PATH_BEFORE" ]] || fail "setting PATH: $(regval 'HKCU\Environment' Path)"
CLAUDE=$APPDATA_U/Claude/claude_desktop_config.json
mkdir -p "$APPDATA_U/Claude"
printf '{\n  "mcpServers": {\n    "mine": {"command": "C:\\\\tools\\\\mine.exe"}\n  }\n}\n' >"$CLAUDE"

# Install, silently, as a user (the prefix has no administrator split;
# the installer asks for none: RequestExecutionLevel user).
start=$SECONDS
wine "$SETUP" /S >"$T/setup.log" 2>&1 || fail "setup /S exited $?: $(tail "$T/setup.log")"
for f in mcp-sandbox.exe mcp-sandbox-tray.exe Uninstall.exe; do
  [[ -f $INST/$f ]] || fail "$INST_W\\$f missing after install"
done
[[ -f "$APPDATA_U/Microsoft/Windows/Start Menu/Programs/MCP Sandbox/MCP Sandbox.lnk" ]] || fail "Start-menu shortcut missing"
ok "setup.exe /S installed in $((SECONDS - start)) s: $INST_W holds mcp-sandbox.exe, mcp-sandbox-tray.exe, Uninstall.exe; Start-menu shortcut"
[[ $(regval "$UNINSTALL_KEY" DisplayVersion) == "REG_SZ	$VERSION" &&
   $(regval "$UNINSTALL_KEY" QuietUninstallString) == "REG_SZ	\"$INST_W\\Uninstall.exe\" /S" ]] ||
  fail "uninstall key: $(wine reg query "$UNINSTALL_KEY" 2>&1 | tr -d '\r')"
ok "HKCU uninstall key: DisplayVersion $VERSION, QuietUninstallString"
got=$(regval 'HKCU\Environment' Path)
[[ $got == "REG_EXPAND_SZ	$PATH_BEFORE$INST_W" ]] || fail "PATH after install: $got"
ok "user PATH (REG_EXPAND_SZ kept): $PATH_BEFORE$INST_W"

# The server from its installed place. A new wine process reads PATH from
# the registry: find it by name, as a new terminal would.
out=$(wine cmd /c "mcp-sandbox.exe version" 2>"$T/version.err" | tr -d '\r')
[[ $out == "mcp-sandbox $VERSION ($COMMIT, windows/amd64,"* ]] ||
  fail "mcp-sandbox version (through PATH): '$out' $(cat "$T/version.err"); PATH in cmd: $(winvar PATH)"
ok "through PATH, in cmd: $out"
code=0
wine "$INST/mcp-sandbox.exe" doctor --json >"$T/doctor.json" 2>"$T/doctor.err" || code=$?
[[ $code == 1 && $(json "$T/doctor.json" 'j["docker"]["chosen"]') == None &&
   $(json "$T/doctor.json" 'j["config"]["valid"]') == True ]] ||
  fail "doctor (no Docker under Wine): exit $code: $(cat "$T/doctor.json" "$T/doctor.err")"
[[ $(json "$T/doctor.json" 'j["install"]["tray"]') == "$INST_W\\mcp-sandbox-tray.exe" ]] ||
  fail "doctor does not find the tray: $(json "$T/doctor.json" 'j["install"]')"
wine "$INST/mcp-sandbox.exe" doctor >"$T/doctor.txt" 2>&1 || true
ok "doctor: exit 1 without a Docker engine, config valid, finds the installed tray"
sed 's/^/      /' "$T/doctor.txt" | tr -d '\r' | head -30 >&2

wine "$INST/mcp-sandbox.exe" clients install --client claude >"$T/clients.txt" 2>&1 || fail "clients install: $(cat "$T/clients.txt")"
python3 - "$CLAUDE" "$INST_W\\mcp-sandbox.exe" <<'PY' || fail "Claude config after install: $(cat "$CLAUDE")"
import json, sys
c = json.load(open(sys.argv[1]))["mcpServers"]
assert c["mine"] == {"command": "C:\\tools\\mine.exe"}, c
assert c["mcp-sandbox"]["command"] == sys.argv[2], c["mcp-sandbox"]
PY
ok "clients install --client claude: $(tr -d '\r' <"$T/clients.txt" | head -1)"
ok "  %APPDATA%\\Claude\\claude_desktop_config.json has mcp-sandbox -> $INST_W\\mcp-sandbox.exe, and the user's own server"

# The tray: it starts and keeps running; a screenshot of the screen. A
# window titled "MCP Sandbox" is looked for and reported (the tray may run
# as an icon-only process with its window in a process of its own).
STATE_U=$LOCAL_U/mcp-sandbox
wine "$INST/mcp-sandbox-tray.exe" >"$T/tray.out" 2>&1 &
TRAY=$!
for _ in $(seq 60); do
  grep -qs 'msg=starting' "$STATE_U/logs/tray.log" && break
  kill -0 "$TRAY" 2>/dev/null || fail "tray exited: $(tail "$T/tray.out") $(tail "$STATE_U/logs/tray.log" 2>/dev/null)"
  sleep 1
done
grep -qs "msg=starting version=\"$VERSION " "$STATE_U/logs/tray.log" || fail "tray log: $(tail "$STATE_U/logs/tray.log" 2>/dev/null)"
sleep 8
kill -0 "$TRAY" 2>/dev/null || fail "tray exited after starting: $(tail "$STATE_U/logs/tray.log")"
ok "tray started and runs (log: $(grep -m1 'msg=starting' "$STATE_U/logs/tray.log" | cut -c1-120))"
# Without Docker the tray says so in a notification: shown, not failed.
# The tray logs "msg=notification" once the shell took the balloon, and
# "notification not shown" when it could not.
for _ in $(seq 30); do grep -qs 'msg=notification \|notification not shown' "$STATE_U/logs/tray.log" && break; sleep 1; done
! grep -s 'notification not shown' "$STATE_U/logs/tray.log" ||
  fail "the tray could not show a notification: $(grep 'notification not shown' "$STATE_U/logs/tray.log")"
grep -qs 'msg=notification .*Docker is not reachable' "$STATE_U/logs/tray.log" ||
  fail "the tray showed no \"Docker is not reachable\" notification: $(tail "$STATE_U/logs/tray.log")"
ok "notification shown without error: $(grep -m1 'msg=notification ' "$STATE_U/logs/tray.log" | sed 's/.*msg=notification //' | cut -c1-100)"
mkdir -p "$SHOTS"
import -window root "$SHOTS/windows-wine-tray.png" || fail "screenshot"
ok "screenshot: $SHOTS/windows-wine-tray.png"
if win=$(xdotool search --name '^MCP Sandbox$' 2>/dev/null | head -1) && [[ -n $win ]]; then
  ok "a window titled \"MCP Sandbox\" is open (X id $win)"
else
  printf '  --  no window titled "MCP Sandbox" (an icon-only tray process?); windows: %s\n' \
    "$(xdotool search --name . getwindowname %@ 2>/dev/null | sort -u | tr '\n' ',')" >&2
fi

# A second launch reaches the first through the named pipe and exits.
code=0
timeout 60 wine "$INST/mcp-sandbox-tray.exe" >"$T/tray2.out" 2>&1 || code=$?
[[ $code == 0 ]] || fail "second tray launch exited $code: $(tail "$STATE_U/logs/tray.log")"
grep -q 'another tray is running' "$STATE_U/logs/tray.log" ||
  fail "second launch did not reach the first: $(tail "$STATE_U/logs/tray.log")"
kill -0 "$TRAY" 2>/dev/null || fail "the first tray ended on the second launch"
ok "second tray launch asked the first through the named pipe and exited 0; the first runs on"
import -window root "$SHOTS/windows-wine-tray-second-launch.png" || true

# The "start at login" value, as the Settings toggle writes it, so the
# uninstaller is seen removing it.
if [[ -z $(regval "$RUN_KEY" 'MCP Sandbox') ]]; then
  wine reg add "$RUN_KEY" /v 'MCP Sandbox' /t REG_SZ /d "\"$INST_W\\mcp-sandbox-tray.exe\" --hidden" /f >/dev/null 2>&1
fi
[[ -n $(regval "$RUN_KEY" 'MCP Sandbox') ]] || fail "Run value"
# Fyne keeps an app's preferences in %APPDATA%\fyne\<app id> once one is
# set; the tray sets none on a plain start, so put one there as Fyne would.
FYNE_U=$APPDATA_U/fyne/$APP_ID
if [[ ! -e $FYNE_U ]]; then
  mkdir -p "$FYNE_U" && printf '{"window.width":800}\n' >"$FYNE_U/preferences.json"
  printf '      (the tray made no %%APPDATA%%\\fyne\\%s: a preferences.json put there, as Fyne writes it)\n' "$APP_ID" >&2
fi
{ find "$APPDATA_U/fyne" -mindepth 1; find "$STATE_U" -type f; } 2>/dev/null | sed "s|^$T/||;s/^/      made: /" >&2 || true

# Uninstall, silently. NSIS's uninstaller copies itself to %TEMP% and
# returns at once: wait for the folder to go.
start=$SECONDS
wine "$INST/Uninstall.exe" /S >"$T/uninstall.log" 2>&1 || fail "Uninstall.exe /S: $(tail "$T/uninstall.log")"
for _ in $(seq 90); do
  [[ ! -e $INST ]] && [[ -z $(regval "$UNINSTALL_KEY" DisplayName) ]] && break
  sleep 1
done
for _ in $(seq 30); do kill -0 "$TRAY" 2>/dev/null || break; sleep 1; done
kill -0 "$TRAY" 2>/dev/null && fail "the uninstaller left the tray running"
TRAY=
ok "Uninstall.exe /S finished in $((SECONDS - start)) s and stopped the tray"

# What is left.
[[ ! -e $INST ]] || fail "left: $(find "$INST")"
[[ ! -e "$APPDATA_U/Microsoft/Windows/Start Menu/Programs/MCP Sandbox" ]] || fail "Start-menu folder left"
ok "no program files, no Start-menu folder"
wine reg query "$UNINSTALL_KEY" >/dev/null 2>&1 && fail "uninstall key left: $(wine reg query "$UNINSTALL_KEY" | tr -d '\r')"
[[ -z $(regval "$RUN_KEY" 'MCP Sandbox') ]] || fail "Run value left"
got=$(regval 'HKCU\Environment' Path)
[[ $got == "REG_EXPAND_SZ	$PATH_BEFORE" ]] || fail "PATH after uninstall: '$got', want '$PATH_BEFORE'"
ok "registry (wine reg query): no uninstall key, no Run value; PATH back to '$PATH_BEFORE' (REG_EXPAND_SZ)"
python3 - "$CLAUDE" <<'PY' || fail "Claude config after uninstall: $(cat "$CLAUDE")"
import json, sys
c = json.load(open(sys.argv[1]))["mcpServers"]
assert "mcp-sandbox" not in c and c["mine"] == {"command": "C:\\tools\\mine.exe"}, c
PY
backups=$(find "$APPDATA_U/Claude" -name 'claude_desktop_config.json*' ! -name 'claude_desktop_config.json' | wc -l)
[[ $backups -ge 1 ]] || fail "no backup of the Claude config: $(ls "$APPDATA_U/Claude")"
ok "Claude config: mcp-sandbox entry removed, the user's server kept, $backups backup(s) beside it"
[[ ! -e $APPDATA_U/fyne ]] || fail "left %APPDATA%\\fyne: $(find "$APPDATA_U/fyne")"
ok "no %APPDATA%\\fyne left"
for f in tray.lock tray.sock http-token paused tray-first-run logs/tray.log.lock tray.json logs/window.log.lock window; do
  [[ ! -e $STATE_U/$f ]] || fail "left the tray's runtime file $f"
done
ok "kept by design in %LOCALAPPDATA%\\mcp-sandbox: $( (cd "$STATE_U" 2>/dev/null && find . -mindepth 1 -maxdepth 2 | sort | tr '\n' ' ') || echo nothing)"
