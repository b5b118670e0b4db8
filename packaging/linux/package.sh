# The Linux target of packaging/build.sh (sourced): both binaries, then
# the .deb (dpkg-deb, no debhelper) and the user-install tarball, from one
# staged tree of files.
# shellcheck shell=bash

# Runtime libraries of the window (the tray links no GUI library): the ones
# it links (libGL, libX11) and the
# X extensions GLFW opens at run time (dlopen, so ldd cannot see them).
# .ci/package checks that every library the binary needs is covered.
LINUX_DEPENDS="libgl1, libx11-6, libxcursor1, libxrandr2, libxinerama1, libxi6, libxxf86vm1"

# The clean Debian 12 (debootstrap minbase) image with just LINUX_DEPENDS
# installed, in which packaging/check.sh installs and removes the .deb
# without a network; .ci/setup-host builds it. Its tag follows the list.
deb_test_image() {
  echo "mcp-sandbox-test/debian-desktop:12-$(printf '%s' "$LINUX_DEPENDS" | sha256sum | cut -c1-8)"
}

linux_target() {
  local arch=amd64 w=$WORK/linux
  rm -rf "$w" && mkdir -p "$w/bin"
  step "linux: build mcp-sandbox (pure Go)" server_build "$w/bin/mcp-sandbox" linux "$arch"
  step "linux: build mcp-sandbox-tray (systray over D-Bus)" \
    gobuild "$w/bin/mcp-sandbox-tray" ./cmd/mcp-sandbox-tray "$TRAY_LDFLAGS" CGO_ENABLED=1 GOOS=linux GOARCH="$arch"
  step "linux: build mcp-sandbox-window (cgo, Fyne)" \
    gobuild "$w/bin/mcp-sandbox-window" ./cmd/mcp-sandbox-window "$TRAY_LDFLAGS" CGO_ENABLED=1 GOOS=linux GOARCH="$arch" GOFLAGS="$WINDOW_GOFLAGS"
  step "linux: stage files" linux_stage "$w"
  step "linux: .deb" linux_deb "$w" "$arch"
  step "linux: .tar.xz" linux_tarball "$w" "$arch"
}

# linux_stage W: W/share holds the menu entry and icons, laid out as under
# /usr/share; W/desktop.deb is the entry with the packaged path.
linux_stage() {
  local w=$1 s
  local share=$w/share
  mkdir -p "$share/applications" "$share/icons/hicolor/scalable/apps"
  for s in 16 24 32 48 64 128 256 512; do
    install -D -m 644 "$ROOT/assets/png/app-$s.png" "$share/icons/hicolor/${s}x$s/apps/mcp-sandbox.png"
  done
  install -m 644 "$ROOT/assets/svg/app.svg" "$share/icons/hicolor/scalable/apps/mcp-sandbox.svg"
  local keywords categories
  keywords=$(toml_list LinuxAndBSD Keywords)
  categories=$(toml_list LinuxAndBSD Categories)
  fill "$PKG/linux/desktop.in" "$share/applications/$APP_ID.desktop" \
    NAME="$APP_NAME" GENERIC_NAME="$(toml_get LinuxAndBSD GenericName)" \
    COMMENT="$(toml_get LinuxAndBSD Comment)" EXEC=mcp-sandbox-tray \
    CATEGORIES="$categories" KEYWORDS="$keywords"
}

# toml_list SECTION KEY: a TOML array of strings as "a;b;c;" for a
# .desktop file.
toml_list() {
  toml_get "$1" "$2" | tr -d '[]"' | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep . | tr '\n' ';'
}

# glibc_depends BIN: "libc6 (>= X)" for the newest GLIBC_ symbol version BIN
# uses, so the package refuses a system too old to run it.
glibc_depends() {
  local v
  v=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  echo "libc6 (>= ${v:-2.17})"
}

linux_deb() {
  local w=$1 arch=$2 root=$1/deb
  rm -rf "$root"
  install -D -m 755 "$w/bin/mcp-sandbox" "$root/usr/bin/mcp-sandbox"
  install -D -m 755 "$w/bin/mcp-sandbox-tray" "$root/usr/bin/mcp-sandbox-tray"
  install -D -m 755 "$w/bin/mcp-sandbox-window" "$root/usr/bin/mcp-sandbox-window"
  mkdir -p "$root/usr/share"
  cp -r "$w/share/applications" "$w/share/icons" "$root/usr/share/"
  install -D -m 644 "$PKG/linux/copyright" "$root/usr/share/doc/mcp-sandbox/copyright"
  # One maintainer script: prerm, on removal only, takes the entries that
  # run /usr/bin/mcp-sandbox out of each user's AI-client configs (see
  # linux/prerm). dpkg triggers refresh the menu and icon caches; the
  # user's settings and state are never touched.
  mkdir -p "$root/DEBIAN"
  install -m 755 "$PKG/linux/prerm" "$root/DEBIAN/prerm"
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  fill "$PKG/linux/control.in" "$root/DEBIAN/control" \
    DEB_VERSION="$DEB_VERSION" ARCH="$arch" \
    INSTALLED_SIZE="$(du -sk --exclude=DEBIAN "$root" | cut -f1)" \
    DEPENDS="$(glibc_depends "$w/bin/mcp-sandbox-window"), $LINUX_DEPENDS"
  find "$root" -type d -exec chmod 755 {} +
  DEB_FILE=$DIST/mcp-sandbox_${VERSION}_$arch.deb
  dpkg-deb --root-owner-group -Zxz --build "$root" "$DEB_FILE" >/dev/null
  log "wrote $DEB_FILE"
}

linux_tarball() {
  local w=$1 arch=$2
  local name=mcp-sandbox-$VERSION-linux-$arch
  local t=$w/tar/$name
  rm -rf "$w/tar" && mkdir -p "$t"
  cp -r "$w/bin" "$w/share" "$t/"
  fill "$PKG/linux/install.sh" "$t/install.sh" APP_ID="$APP_ID"
  chmod 755 "$t/install.sh" "$t/bin/"*
  cat >"$t/README.txt" <<EOF
$APP_NAME $VERSION for Linux ($arch)

Run ./install.sh to install it for your user (no root needed): the programs
go to ~/.local/bin, a menu entry and icons to ~/.local/share, and the tray
starts and sets up Claude Desktop and Cursor. ./install.sh --uninstall
removes it again; your settings in ~/.config/mcp-sandbox are kept.

Check the set-up with: ~/.local/bin/mcp-sandbox doctor
EOF
  TAR_FILE=$DIST/$name.tar.xz
  tar -C "$w/tar" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    -cf - "$name" | xz -T0 -6 >"$TAR_FILE"
  log "wrote $TAR_FILE"
}
