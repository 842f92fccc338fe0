#!/bin/sh
# fetch-echarts.sh puts the pinned echarts script where package chart embeds it.
#
# chart.html must open with no network, so vibe-test carries echarts inside its
# binary (internal/chart/assets, embedded with go:embed). The file is a build product:
# it comes from the npm package echarts@5.6.0, pinned in tools/package.json and
# tools/package-lock.json, is checked against the checksum below, and is
# git-ignored so the repository never carries a 650 KB minified blob.
#
# Run it from anywhere; "make build" runs it before "go build".
set -eu

version=5.6.0
want=55974cf42cc160e6cf9099cd3ed8cdedfaa9779919fcee7e2272c85f6ca30e27

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tools/node_modules/echarts/dist/echarts.common.min.js"
dst="$root/internal/chart/assets/echarts.min.js"

if [ ! -d "$root/tools/node_modules/echarts" ]; then
	# npm ci installs exactly what package-lock.json pins, or fails.
	echo "fetch-echarts: installing tools/ with npm ci" >&2
	npm ci --prefix "$root/tools"
fi

if [ ! -f "$src" ]; then
	echo "fetch-echarts: $src is missing; remove tools/node_modules and run: npm ci --prefix tools" >&2
	exit 1
fi

# sha256sum is coreutils (Linux); macOS ships shasum instead.
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$src" | cut -d' ' -f1)
else
	got=$(shasum -a 256 "$src" | cut -d' ' -f1)
fi
if [ "$got" != "$want" ]; then
	echo "fetch-echarts: $src has sha256 $got, want $want (echarts@$version);" >&2
	echo "fetch-echarts: remove tools/node_modules and run: npm ci --prefix tools" >&2
	exit 1
fi

# Copy through a temporary file so an interrupted copy never leaves a
# truncated script for go:embed to pick up.
tmp="$dst.tmp.$$"
trap 'rm -f "$tmp"' EXIT
cp "$src" "$tmp"
mv "$tmp" "$dst"
trap - EXIT
echo "fetch-echarts: echarts@$version -> internal/chart/assets/echarts.min.js" >&2
