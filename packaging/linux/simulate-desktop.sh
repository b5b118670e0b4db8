#!/usr/bin/env bash
# Usage: packaging/linux/simulate-desktop.sh DEB
#
# Asks apt what `apt install ./DEB` would do on a machine that runs Docker
# Desktop for Linux (docker-desktop, docker-ce-cli, containerd.io installed)
# and can install Debian's docker.io, which conflicts with docker-ce-cli:
# a simulation (apt-get -s) against this machine's installed packages plus
# those, in a scratch apt state, so nothing here changes. It prints apt's
# plan and fails when the plan removes any package.
set -euo pipefail
deb=$(realpath "${1:?usage: simulate-desktop.sh DEB}")
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/lists/partial" "$w/cache/archives/partial" "$w/repo"

# Installed: this machine's packages without its own engine, plus Docker
# Desktop's.
python3 - /var/lib/dpkg/status "$w/status" <<'PY'
import sys
engine = {"docker.io", "docker-cli", "containerd", "runc", "docker-ce", "docker-ce-cli",
          "containerd.io", "docker-desktop", "podman", "podman-docker", "mcp-sandbox"}
paras = open(sys.argv[1]).read().strip().split("\n\n")
keep = [p for p in paras if p.split("\n", 1)[0].split(": ", 1)[1] not in engine]
arch = "amd64"
fake = [
    "Package: containerd.io\nStatus: install ok installed\nVersion: 1.7.0-1\nArchitecture: amd64\nConflicts: containerd, runc\nReplaces: containerd, runc\nProvides: containerd, runc\nDescription: fake\n",
    "Package: docker-ce-cli\nStatus: install ok installed\nVersion: 5:27.0.0-1~debian.12~bookworm\nArchitecture: amd64\nConflicts: docker, docker-engine, docker.io\nReplaces: docker-ce, docker-engine\nDescription: fake\n",
    "Package: docker-desktop\nStatus: install ok installed\nVersion: 4.30.0-1\nArchitecture: amd64\nDepends: docker-ce-cli\nDescription: fake\n",
]
open(sys.argv[2], "w").write("\n\n".join(keep + [f.strip() for f in fake]) + "\n")
PY

# Available: Debian's engine packages, as a local repository.
cat >"$w/repo/Packages" <<'PKG'
Package: docker.io
Version: 20.10.24+dfsg1-1+b3
Architecture: amd64
Depends: containerd, runc, iptables
Breaks: docker-ce-cli
Filename: ./docker.io.deb
Size: 1
Description: fake

Package: podman-docker
Version: 4.3.1+ds1-8+b1
Architecture: amd64
Depends: podman
Conflicts: docker-ce-cli, docker.io
Filename: ./podman-docker.deb
Size: 1
Description: fake

Package: podman
Version: 4.3.1+ds1-8+b1
Architecture: amd64
Filename: ./podman.deb
Size: 1
Description: fake
PKG
echo "deb [trusted=yes] file:$w/repo ./" >"$w/sources.list"
apt_opts=(-o "Dir::State::status=$w/status" -o "Dir::State::Lists=$w/lists" -o "Dir::Cache=$w/cache"
  -o "Dir::Etc::SourceList=$w/sources.list" -o "Dir::Etc::SourceParts=/dev/null" -o "Debug::NoLocking=1"
  -o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" -qq update
plan=$(apt-get "${apt_opts[@]}" -s install "$deb" 2>&1) || { echo "$plan"; exit 1; }
echo "$plan"
if grep -q '^Remv ' <<<"$plan"; then
  echo "simulate-desktop.sh: installing $(basename "$deb") would remove: $(grep '^Remv ' <<<"$plan" | cut -d' ' -f2 | tr '\n' ' ')" >&2
  exit 1
fi
echo "simulate-desktop.sh: installing $(basename "$deb") beside Docker Desktop removes nothing"
