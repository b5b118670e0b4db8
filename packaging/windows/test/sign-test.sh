#!/usr/bin/env bash
# Tests packaging/windows/sign.sh with a throwaway self-signed code-signing
# certificate made here with openssl (issue 14): the two programs and the
# installer built by `packaging/build.sh windows` (copies; dist/ is not
# changed) are signed and pass `osslsigncode verify` against that
# certificate; so does the uninstaller NSIS embeds when the installer is
# built with a certificate (!uninstfinalize; a quick zlib build here); a
# flipped byte fails verification, a wrong password fails the signing, and
# without MCP_SANDBOX_SIGN_PFX nothing is signed and the build goes on.
#
#   packaging/windows/test/sign-test.sh
#
# Needs: openssl, osslsigncode, makensis, 7z.
set -euo pipefail

# shellcheck source=packaging/lib.sh
. "$(dirname "$0")/../../lib.sh"
init_release >/dev/null 2>&1
out=$WORK/windows/out
setup=$DIST/mcp-sandbox-$VERSION-windows-amd64-setup.exe

fail() { printf 'sign check FAILED: %s\n' "$*" >&2; exit 1; }
ok() { printf '  ok  %s\n' "$*" >&2; }
for t in openssl osslsigncode makensis 7z; do command -v "$t" >/dev/null || fail "$t is missing"; done
[[ -f $setup && -f $out/mcp-sandbox.exe ]] || fail "run packaging/build.sh windows first"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pw=test-$RANDOM$RANDOM
openssl req -x509 -newkey rsa:3072 -sha256 -days 2 -nodes -subj "/CN=MCP Sandbox test signing" \
  -addext keyUsage=critical,digitalSignature -addext extendedKeyUsage=codeSigning \
  -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
openssl pkcs12 -export -inkey "$T/key.pem" -in "$T/cert.pem" -out "$T/test.pfx" -passout "pass:$pw"
ok "self-signed code-signing certificate and .pfx made"

# verify FILE: a valid Authenticode signature by the test certificate.
verify() {
  osslsigncode verify -CAfile "$T/cert.pem" -in "$1" >"$T/verify.log" 2>&1 ||
    fail "osslsigncode verify $(basename "$1"): $(tail -5 "$T/verify.log")"
  grep -q 'Signature verification: ok' "$T/verify.log" && grep -q 'CN=MCP Sandbox test signing' "$T/verify.log" ||
    fail "verify $(basename "$1"): $(cat "$T/verify.log")"
}

mkdir "$T/files"
cp "$out/mcp-sandbox.exe" "$out/mcp-sandbox-tray.exe" "$setup" "$T/files/"
files=("$T"/files/*.exe)

# No certificate: nothing signed, success, and it says so.
sha256sum "${files[@]}" >"$T/sums"
env -u MCP_SANDBOX_SIGN_PFX "$PKG/windows/sign.sh" "${files[@]}" 2>"$T/skip.log" || fail "sign.sh without a certificate failed"
grep -q 'not signing .*MCP_SANDBOX_SIGN_PFX is not set' "$T/skip.log" || fail "no skip message: $(cat "$T/skip.log")"
sha256sum --quiet -c "$T/sums" || fail "sign.sh changed files without a certificate"
ok "without MCP_SANDBOX_SIGN_PFX: nothing signed, \"$(head -c 60 "$T/skip.log")…\""

# A wrong password fails loudly.
MCP_SANDBOX_SIGN_PFX=$T/test.pfx MCP_SANDBOX_SIGN_PASSWORD=wrong "$PKG/windows/sign.sh" "${files[0]}" 2>/dev/null &&
  fail "signing with a wrong password succeeded"
sha256sum --quiet -c "$T/sums" || fail "a failed signing changed a file"
ok "a wrong password fails the signing"

MCP_SANDBOX_SIGN_PFX=$T/test.pfx MCP_SANDBOX_SIGN_PASSWORD=$pw "$PKG/windows/sign.sh" "${files[@]}" 2>"$T/sign.log" || fail "sign.sh: $(cat "$T/sign.log")"
for f in "${files[@]}"; do verify "$f"; done
ok "signed and verified (osslsigncode verify, sha256): $(cd "$T/files" && echo *.exe)"
[[ -x $T/files/mcp-sandbox.exe ]] || fail "signing lost the file mode"

# A flipped byte in the signed code breaks the signature.
cp "$T/files/mcp-sandbox.exe" "$T/tampered.exe"
printf '\x90' | dd of="$T/tampered.exe" bs=1 seek=4096 conv=notrunc 2>/dev/null
osslsigncode verify -CAfile "$T/cert.pem" -in "$T/tampered.exe" >/dev/null 2>&1 && fail "a tampered exe verified"
ok "a flipped byte fails verification"

# The uninstaller NSIS embeds is signed when the installer is built with a
# certificate (a quick zlib build of the real installer.nsi).
MCP_SANDBOX_SIGN_PFX=$T/test.pfx MCP_SANDBOX_SIGN_PASSWORD=$pw makensis -V2 -INPUTCHARSET UTF8 \
  -X"SetCompressor /FINAL zlib" -DSIGN="$PKG/windows/sign.sh" \
  -DVERSION="$VERSION" -DFILE_VERSION=0.0.0.0 -DCOMMIT="$COMMIT" -DAPP_ID="$APP_ID" \
  -DSRC="$out" -DOUTFILE="$T/setup-signed.exe" "$PKG/windows/installer.nsi" >"$T/makensis.log" 2>&1 ||
  fail "makensis with SIGN: $(tail "$T/makensis.log")"
7z x -y -o"$T/setup" "$T/setup-signed.exe" Uninstall.exe >/dev/null || fail "no Uninstall.exe in the installer"
verify "$T/setup/Uninstall.exe"
ok "the embedded Uninstall.exe is signed and verifies"
