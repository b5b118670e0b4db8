#!/usr/bin/env bash
# Authenticode-signs Windows executables in place with osslsigncode, when a
# certificate is provided (packaging/build.sh windows signs both programs,
# the uninstaller NSIS writes, and the installer):
#
#   MCP_SANDBOX_SIGN_PFX=cert.pfx MCP_SANDBOX_SIGN_PASSWORD=… packaging/windows/sign.sh FILE.exe...
#
# MCP_SANDBOX_SIGN_PFX       a PKCS#12 file with the code-signing certificate and its key
# MCP_SANDBOX_SIGN_PASSWORD  its password (read by osslsigncode from a private file, never argv)
# MCP_SANDBOX_SIGN_TIMESTAMP_URL  optional RFC 3161 time-stamp server, so the
#                            signature outlives the certificate
#
# Without MCP_SANDBOX_SIGN_PFX it signs nothing, says so, and succeeds.
# With it, a failure (a wrong password, a missing file) fails the build.
set -euo pipefail

pfx=${MCP_SANDBOX_SIGN_PFX:-}
if [[ -z $pfx ]]; then
  printf '==> not signing %s: MCP_SANDBOX_SIGN_PFX is not set\n' "$*" >&2
  exit 0
fi
[[ -f $pfx ]] || { echo "sign.sh: MCP_SANDBOX_SIGN_PFX=$pfx: no such file" >&2; exit 1; }
command -v osslsigncode >/dev/null || { echo "sign.sh: osslsigncode is missing (apt-get install osslsigncode)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=$tmp/pass
(umask 077 && printf '%s' "${MCP_SANDBOX_SIGN_PASSWORD:-}" >"$pass")
ts=()
[[ -n ${MCP_SANDBOX_SIGN_TIMESTAMP_URL:-} ]] && ts=(-ts "$MCP_SANDBOX_SIGN_TIMESTAMP_URL")

for f in "$@"; do
  rm -f "$tmp/signed"
  osslsigncode sign -pkcs12 "$pfx" -readpass "$pass" -h sha256 \
    -n "MCP Sandbox" -i "https://github.com/mcp-sandbox/mcp-sandbox" "${ts[@]}" \
    -in "$f" -out "$tmp/signed" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; echo "sign.sh: signing $f failed" >&2; exit 1; }
  # In place, keeping the file's mode.
  cat "$tmp/signed" >"$f"
  printf '==> signed %s\n' "$f" >&2
done
