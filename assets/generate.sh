#!/usr/bin/env bash
# Renders the icons from the SVG sources in svg/ into png/, and the Windows
# ICO and macOS ICNS beside them. The outputs are committed, so a build
# needs none of these tools; run this after changing an SVG.
#
#   assets/generate.sh          regenerate everything
#   assets/generate.sh --check  fail if a committed file differs visibly from
#                               what the SVGs render to now
#
# Needs rsvg-convert (librsvg2-bin), convert (imagemagick), png2icns and
# icns2png (icnsutils).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
check=false
[[ ${1:-} == --check ]] && check=true

for t in rsvg-convert convert png2icns icns2png; do
  command -v "$t" >/dev/null || { echo "generate.sh: $t is missing (apt-get install librsvg2-bin imagemagick icnsutils)" >&2; exit 1; }
done

out=$here
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if $check; then
  out=$scratch/out
fi
mkdir -p "$out/png" "$scratch/mac"

# render SVG SIZE NAME [DIR]: one PNG in DIR (png/), without the metadata
# (times) that would make every run differ.
render() {
  local dir=${4:-$out/png}
  rsvg-convert -w "$2" -h "$2" "$here/svg/$1" -o "$scratch/render.png"
  convert "$scratch/render.png" -strip "PNG32:$dir/$3.png"
}

# The app icon: the simplified art below 32 px, where the prompt on the
# cube's face would only be noise.
for s in 16 24; do render app-small.svg "$s" "app-$s"; done
for s in 32 48 64 128 256 512 1024; do render app.svg "$s" "app-$s"; done
# The macOS variant sits on Apple's icon grid (smaller tile, shadow); only
# its ICNS is kept.
for s in 16 32 128 256 512 1024; do render app-macos.svg "$s" "$s" "$scratch/mac"; done
# Tray icons in colour (Linux, Windows) for each state, and the macOS
# menu-bar templates at 1x and 2x.
for st in running paused docker-missing; do
  for s in 32 64; do render "tray-$st.svg" "$s" "tray-$st-$s"; done
  render "tray-template-$st.svg" 22 "tray-template-$st-22"
  render "tray-template-$st.svg" 44 "tray-template-$st-44"
done

# Windows: one ICO with every size Explorer and the taskbar ask for.
convert "$out"/png/app-{16,24,32,48,64,256}.png "$out/mcp-sandbox.ico"
# macOS: ICNS from the grid variant (png2icns takes 16, 32, 48, 128, 256,
# 512 and 1024).
png2icns "$out/mcp-sandbox.icns" "$scratch"/mac/{16,32,128,256,512,1024}.png >/dev/null

$check || { echo "assets: icons regenerated in $here" >&2; exit 0; }

# Compare pixels, not bytes: librsvg and zlib versions differ between
# machines, and a difference of a few levels at an edge is not a change.
bad=0
for f in "$out"/png/*.png; do
  name=png/$(basename "$f")
  if [[ ! -f $here/$name ]]; then
    echo "missing: assets/$name (run assets/generate.sh)" >&2; bad=1; continue
  fi
  diff=$(compare -metric AE -fuzz 8% "$here/$name" "$f" null: 2>&1 || true)
  if [[ ${diff%% *} != 0 ]]; then
    echo "stale: assets/$name differs from svg/ in $diff pixels (run assets/generate.sh)" >&2; bad=1
  fi
done
for f in "$here"/png/*.png; do
  [[ -f $out/png/$(basename "$f") ]] || { echo "unexpected: assets/png/$(basename "$f") is not made from svg/" >&2; bad=1; }
done
# The containers: same sizes inside as a fresh build.
list_ico() { identify -format '%wx%h\n' "$1" | sort; }
[[ $(list_ico "$here/mcp-sandbox.ico") == "$(list_ico "$out/mcp-sandbox.ico")" ]] ||
  { echo "stale: assets/mcp-sandbox.ico (run assets/generate.sh)" >&2; bad=1; }
list_icns() { icns2png -l "$1" | grep -Eo ' [0-9]+x[0-9]+ ' | sort; }
[[ $(list_icns "$here/mcp-sandbox.icns") == "$(list_icns "$out/mcp-sandbox.icns")" ]] ||
  { echo "stale: assets/mcp-sandbox.icns (run assets/generate.sh)" >&2; bad=1; }
((bad == 0)) && echo "assets: icons are up to date with svg/" >&2
exit "$bad"
