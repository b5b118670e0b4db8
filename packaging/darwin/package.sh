# The macOS target of packaging/build.sh (sourced). Anywhere: the pure-Go
# server for amd64 and arm64, the bundle's Info.plist and its icon. On a
# Mac, also the tray (cgo needs Apple's SDK), the universal
# "MCP Sandbox.app" with both programs in Contents/MacOS, and the .dmg.
#
# Signing on a Mac: MACOS_SIGN_IDENTITY ("Developer ID Application: …")
# signs with the hardened runtime; without it the bundle is signed ad hoc
# (it runs, but Gatekeeper asks the first time). MACOS_NOTARY_PROFILE, a
# `xcrun notarytool store-credentials` profile, also notarizes the .dmg.
# shellcheck shell=bash

darwin_target() {
  local w=$WORK/darwin arch
  rm -rf "$w" && mkdir -p "$w"
  for arch in amd64 arm64; do
    step "darwin: build mcp-sandbox ($arch, pure Go)" \
      server_build "$DIST/mcp-sandbox-$VERSION-darwin-$arch" darwin "$arch"
  done
  step "darwin: Info.plist and icon" darwin_bundle_parts "$w"
  if [[ $(uname -s) != Darwin ]]; then
    log "darwin: the tray, the .app and the .dmg need a Mac: run packaging/build.sh darwin there"
    return
  fi
  for arch in amd64 arm64; do
    step "darwin: build mcp-sandbox-tray ($arch, cgo)" \
      gobuild "$w/mcp-sandbox-tray-$arch" ./cmd/mcp-sandbox-tray "$TRAY_LDFLAGS" \
      CGO_ENABLED=1 GOOS=darwin GOARCH="$arch" MACOSX_DEPLOYMENT_TARGET=12.0
    step "darwin: build mcp-sandbox-window ($arch, cgo)" \
      gobuild "$w/mcp-sandbox-window-$arch" ./cmd/mcp-sandbox-window "$TRAY_LDFLAGS" \
      CGO_ENABLED=1 GOOS=darwin GOARCH="$arch" MACOSX_DEPLOYMENT_TARGET=12.0 GOFLAGS="$WINDOW_GOFLAGS"
  done
  step "darwin: universal MCP Sandbox.app" darwin_app "$w"
  step "darwin: .dmg" darwin_dmg "$w"
}

# darwin_bundle_parts W: what the bundle holds besides the programs.
darwin_bundle_parts() {
  local w=$1
  fill "$PKG/darwin/Info.plist.in" "$w/Info.plist" \
    APP_NAME="$APP_NAME" APP_ID="$APP_ID" VERSION="$VERSION" BUILD="$BUILD" COMMIT="$COMMIT"
  cp "$ROOT/assets/mcp-sandbox.icns" "$w/mcp-sandbox.icns"
}

darwin_app() {
  local w=$1
  APP_DIR="$DIST/$APP_NAME.app"
  rm -rf "$APP_DIR"
  mkdir -p "$APP_DIR/Contents/MacOS" "$APP_DIR/Contents/Resources"
  lipo -create -output "$APP_DIR/Contents/MacOS/mcp-sandbox-tray" "$w"/mcp-sandbox-tray-{amd64,arm64}
  lipo -create -output "$APP_DIR/Contents/MacOS/mcp-sandbox-window" "$w"/mcp-sandbox-window-{amd64,arm64}
  lipo -create -output "$APP_DIR/Contents/MacOS/mcp-sandbox" "$DIST/mcp-sandbox-$VERSION"-darwin-{amd64,arm64}
  cp "$w/Info.plist" "$APP_DIR/Contents/Info.plist"
  printf 'APPL????' >"$APP_DIR/Contents/PkgInfo"
  cp "$w/mcp-sandbox.icns" "$APP_DIR/Contents/Resources/"
  plutil -lint "$APP_DIR/Contents/Info.plist" >/dev/null

  local id=${MACOS_SIGN_IDENTITY:--} opts=()
  [[ $id != - ]] && opts=(--options runtime --timestamp)
  # Inside out: the helper first, then the bundle (which seals the tray).
  codesign --force ${opts[@]+"${opts[@]}"} --sign "$id" "$APP_DIR/Contents/MacOS/mcp-sandbox"
  codesign --force ${opts[@]+"${opts[@]}"} --sign "$id" "$APP_DIR/Contents/MacOS/mcp-sandbox-window"
  codesign --force ${opts[@]+"${opts[@]}"} --sign "$id" "$APP_DIR"
  codesign --verify --strict --verbose=1 "$APP_DIR"
  log "wrote $APP_DIR ($(lipo -archs "$APP_DIR/Contents/MacOS/mcp-sandbox-tray"))"
}

darwin_dmg() {
  local w=$1 stage=$1/dmg
  DMG_FILE=$DIST/mcp-sandbox-$VERSION-darwin-universal.dmg
  rm -rf "$stage" "$DMG_FILE" && mkdir -p "$stage"
  cp -R "$APP_DIR" "$stage/"
  ln -s /Applications "$stage/Applications"
  hdiutil create -quiet -volname "$APP_NAME" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$DMG_FILE"
  if [[ ${MACOS_SIGN_IDENTITY:-} ]]; then
    codesign --force --timestamp --sign "$MACOS_SIGN_IDENTITY" "$DMG_FILE"
  fi
  if [[ ${MACOS_NOTARY_PROFILE:-} ]]; then
    xcrun notarytool submit "$DMG_FILE" --keychain-profile "$MACOS_NOTARY_PROFILE" --wait
    xcrun stapler staple "$DMG_FILE"
  fi
  hdiutil verify -quiet "$DMG_FILE"
  log "wrote $DMG_FILE"
}
