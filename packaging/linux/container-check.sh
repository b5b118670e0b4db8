#!/usr/bin/env bash
# Usage: packaging/linux/container-check.sh DEB IMAGE
#
# Installs and removes DEB the way a user does, in a clean Debian 12
# container (IMAGE: debootstrap minbase plus only what the .deb depends on,
# made by .ci/setup-host) without a network, so apt must find everything it
# needs already installed:
#
#   apt-get install ./DEB; as two users, `mcp-sandbox version` and
#   `clients install --client claude` (one of them then points the entry at
#   another program); the .deb again (an upgrade keeps the entries);
#   apt-get remove: the entry that ran /usr/bin/mcp-sandbox is gone, with a
#   backup owned by the user, the changed one and the rest of each file
#   stay, and every packaged file is gone; the same again with apt-get purge.
#   The users' own settings are never touched; root's home gains nothing.
#
# Prints what happens; fails on the first thing that is not so.
set -euo pipefail
deb=$(realpath "${1:?usage: container-check.sh DEB IMAGE}")
image=${2:?usage: container-check.sh DEB IMAGE}
docker image inspect "$image" >/dev/null 2>&1 || {
  echo "container-check.sh: no image $image (run .ci/setup-host)" >&2
  exit 1
}
name=mcp-sandbox-deb-check-$$
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
timeout 300 docker run --rm -i --name "$name" --label io.mcp-sandbox.ci=deb-check --network=none \
  -v "$deb:/tmp/$(basename "$deb"):ro" -e DEB="/tmp/$(basename "$deb")" "$image" /bin/bash -s <<'IN'
set -euo pipefail
fail() { echo "FAILED: $*" >&2; exit 1; }
ok() { echo "  ok  $*"; }
export DEBIAN_FRONTEND=noninteractive
claude=.config/Claude/claude_desktop_config.json
# as USER CMD...: runs CMD as USER in a login-like environment.
as() { local u=$1; shift; runuser -u "$u" -- env -i HOME="$(getent passwd "$u" | cut -d: -f6)" PATH=/usr/bin:/bin "$@"; }

useradd -m -s /bin/sh alice
for u in sandbox alice; do
  h=$(getent passwd "$u" | cut -d: -f6)
  as "$u" mkdir -p "$h/.config/Claude" "$h/.config/mcp-sandbox"
  as "$u" sh -c "printf '{\"mcpServers\": {\"other\": {\"command\": \"/usr/bin/other\"}}}\n' >$h/$claude"
  as "$u" sh -c "printf '[limits]\nmemory_mb = 768\n' >$h/.config/mcp-sandbox/config.toml"
done
touch /tmp/start
[[ -z $(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial) ]] || fail "the image has apt lists"

install_and_configure() {
  apt-get install -y "$DEB" >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "apt-get install ./$(basename "$DEB")"; }
  grep -E '^Need to get [1-9]|^Get:[0-9]+ [a-z]+:' /tmp/apt.log && fail "apt wanted to download"
  grep -q '^0 upgraded, 1 newly installed, 0 to remove' /tmp/apt.log || { cat /tmp/apt.log; fail "apt installed more than the .deb"; }
  ok "apt-get install ./$(basename "$DEB"): nothing to download (no network), 1 newly installed, 0 to remove"
  for u in sandbox alice; do
    v=$(as "$u" mcp-sandbox version) || fail "$u: mcp-sandbox version"
    out=$(as "$u" mcp-sandbox clients install --client claude --docker-host unix:///run/docker.sock) || fail "$u: clients install: $out"
    grep -q '"command": "/usr/bin/mcp-sandbox"' "/home/$u/$claude" || fail "$u's entry: $(cat "/home/$u/$claude")"
  done
  ok "as two users: $v; clients install --client claude wrote /usr/bin/mcp-sandbox"
  # alice points her entry at a program of her own.
  sed -i 's|"/usr/bin/mcp-sandbox"|"/opt/mine/mcp-sandbox"|' /home/alice/$claude
  cp /home/alice/$claude /tmp/alice.json
}

check_removed() { # check_removed HOW LOG
  local how=$1 log=$2 f
  grep -q "^mcp-sandbox (sandbox): claude: removed the entry from /home/sandbox/$claude, backup " "$log" ||
    { cat "$log"; fail "$how did not say it removed sandbox's entry"; }
  grep -q "^mcp-sandbox (alice): claude: left the mcp-sandbox entry in /home/alice/$claude as it is: it runs /opt/mine/mcp-sandbox" "$log" ||
    { cat "$log"; fail "$how did not say it left alice's entry"; }
  ok "$how said: $(grep '^mcp-sandbox (' "$log" | tr '\n' ';')"
  f=/home/sandbox/$claude
  grep -q mcp-sandbox "$f" && fail "$how left the entry: $(cat "$f")"
  grep -q '"other"' "$f" || fail "$how lost the user's other server: $(cat "$f")"
  ls /home/sandbox/.config/Claude/ | grep -q '\.bak' || fail "no backup: $(ls -a /home/sandbox/.config/Claude)"
  [[ -z $(find /home/sandbox ! -user sandbox) && -z $(find /home/alice ! -user alice) ]] ||
    fail "files in the homes not owned by their user: $(find /home/sandbox ! -user sandbox; find /home/alice ! -user alice)"
  ok "$how: sandbox's entry gone, backed up (as the user), its other server kept"
  cmp -s /home/alice/$claude /tmp/alice.json || fail "$how changed alice's entry: $(cat /home/alice/$claude)"
  ok "$how: alice's entry, which runs another program, untouched"
  for f in /usr/bin/mcp-sandbox /usr/bin/mcp-sandbox-tray /usr/share/applications/*mcp*sandbox* \
    /usr/share/icons/hicolor/48x48/apps/mcp-sandbox.png /usr/share/doc/mcp-sandbox; do
    [[ ! -e $f ]] || fail "$how left $f"
  done
  dpkg-query -W -f='${Status}\n' mcp-sandbox 2>/dev/null | grep -q 'ok installed' && fail "still installed"
  ok "$how: every packaged file gone"
  for u in sandbox alice; do
    grep -q 'memory_mb = 768' "/home/$u/.config/mcp-sandbox/config.toml" || fail "$how changed $u's settings"
  done
  [[ -z $(find /root -mindepth 1 -newer /tmp/start) ]] || fail "$how left files in /root: $(find /root -mindepth 1 -newer /tmp/start)"
  ok "$how: the users' settings kept, nothing written in /root"
}

echo "==> apt-get install, then an upgrade, then apt-get remove"
install_and_configure
dpkg -i "$DEB" >/tmp/up.log 2>&1 || { cat /tmp/up.log; fail "dpkg -i again"; }
grep -q '/usr/bin/mcp-sandbox' /home/sandbox/$claude || fail "the upgrade removed the entry"
ok "the .deb over itself (prerm upgrade) kept the entries"
apt-get remove -y mcp-sandbox >/tmp/remove.log 2>&1 || { cat /tmp/remove.log; fail "apt-get remove"; }
check_removed "apt-get remove" /tmp/remove.log

echo "==> again, with apt-get purge"
rm -f /home/sandbox/.config/Claude/*.bak*
install_and_configure
apt-get purge -y mcp-sandbox >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; fail "apt-get purge"; }
check_removed "apt-get purge" /tmp/purge.log
st=$(dpkg-query -W -f='${Status}' mcp-sandbox 2>/dev/null || true)
[[ -z $st || $st == *not-installed ]] || fail "after purge, dpkg says: $st"
ok "apt-get purge: dpkg has no trace of mcp-sandbox"
IN
