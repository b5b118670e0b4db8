# Shared by packaging/build.sh and the per-OS scripts (sourced, not run):
# the release's version and stamps, timing, templates and the go builds.
# shellcheck shell=bash disable=SC2034 # its variables are read by the scripts that source it

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=$ROOT/packaging
DIST=${DIST_DIR:-$ROOT/dist}
WORK=$DIST/.work
MODULE=github.com/mcp-sandbox/mcp-sandbox

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'packaging: %s\n' "$*" >&2; exit 1; }

# toml_get SECTION KEY: a string or number from FyneApp.toml, the one
# source of the product's name, id and version.
toml_get() {
  awk -v sec="[$1]" -v key="$2" '
    /^\[/ { in_sec = ($0 == sec) }
    in_sec && $1 == key && $2 == "=" {
      sub(/^[^=]*=[ \t]*/, ""); gsub(/^"|"[ \t]*(#.*)?$/, ""); print; exit
    }' "$ROOT/FyneApp.toml"
}

# step NAME CMD...: runs CMD and records how long it took.
STEP_TIMES=()
step() {
  local name=$1 start=$SECONDS
  shift
  log "$name"
  "$@"
  STEP_TIMES+=("$(printf '%4ds  %s' $((SECONDS - start)) "$name")")
}

print_times() {
  log "timings"
  printf '  %s\n' "${STEP_TIMES[@]}" >&2
}

# fill TEMPLATE OUT KEY=VALUE...: copies TEMPLATE to OUT with every @KEY@
# replaced by VALUE, and fails if a placeholder is left.
fill() {
  local tpl=$1 out=$2 text kv
  shift 2
  text=$(<"$tpl")
  for kv in "$@"; do
    text=${text//@${kv%%=*}@/${kv#*=}}
  done
  if [[ $text =~ @[A-Z_]+@ ]]; then
    die "$tpl: placeholder ${BASH_REMATCH[0]} not filled"
  fi
  printf '%s\n' "$text" >"$out"
}

# init_release sets the version and the stamps every target uses.
init_release() {
  APP_NAME=$(toml_get Details Name)
  APP_ID=$(toml_get Details ID)
  VERSION=${MCP_SANDBOX_VERSION:-$(toml_get Details Version)}
  VERSION=${VERSION#v}
  BUILD=$(toml_get Details Build)
  [[ $VERSION =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
    die "version \"$VERSION\" is not semantic (MAJOR.MINOR.PATCH[-pre][+build])"
  VERSION_NUMS=("${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
  PRERELEASE=${BASH_REMATCH[4]#-}
  [[ $BUILD =~ ^[0-9]+$ ]] || die "FyneApp.toml: Build \"$BUILD\" is not a number"
  # Debian orders "~" before anything, as semver orders a pre-release
  # before its release: 1.2.0-rc.1 becomes 1.2.0~rc.1.
  DEB_VERSION=${VERSION/-/\~}
  DEB_VERSION=${DEB_VERSION%%+*}

  if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    COMMIT=$(git -C "$ROOT" describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null || echo unknown)
    SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct)}
  else
    COMMIT=unknown
    SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
  fi
  export SOURCE_DATE_EPOCH # dpkg-deb and tar clamp file times to it
  DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

  local bi=$MODULE/sandbox/buildinfo
  LDFLAGS="-s -w -X $bi.Version=$VERSION -X $bi.Commit=$COMMIT -X $bi.Date=$DATE"
  # The tray alone carries the release key its update check trusts.
  TRAY_LDFLAGS=$LDFLAGS
  if [[ -n ${MCP_SANDBOX_UPDATE_PUBLIC_KEY:-} ]]; then
    TRAY_LDFLAGS+=" -X $MODULE/app/update.DefaultPublicKey=$MCP_SANDBOX_UPDATE_PUBLIC_KEY"
  fi
  mkdir -p "$DIST" "$WORK"
  log "$APP_NAME $VERSION (build $BUILD, commit $COMMIT, $DATE)"
}

# WINDOW_GOFLAGS is how mcp-sandbox-window is built, as sandbox/testenv's
# WindowTags: no_emoji leaves out Fyne's colour emoji font, which the
# window never shows and Fyne parses again for every text style (about
# 18 MB of the window's heap).
WINDOW_GOFLAGS=-tags=no_emoji

# gobuild OUT PKG LDFLAGS [ENV=VALUE...]: a release build of PKG.
gobuild() {
  local out=$1 pkg=$2 ldflags=$3
  shift 3
  (cd "$ROOT" && env "$@" go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" "$pkg")
}

# server_build OUT GOOS GOARCH: the pure-Go server, static, for any system.
server_build() {
  gobuild "$1" ./cmd/mcp-sandbox "$LDFLAGS" CGO_ENABLED=0 GOOS="$2" GOARCH="$3"
}
