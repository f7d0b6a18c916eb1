#!/bin/sh
# A stand-in for the official node:<major>-bookworm-slim image, for machines that reach Debian's
# mirror and the npm registry but no registry of images (CI here): a minimal Debian bookworm root
# file system (debootstrap --variant=minbase), the official Node binary of the release and the npm it
# bundles in /usr/local (scripts/image/node.sh), and a `node` user and group with id 1000, as the
# official image has them. Tagged with the official name, so that the Dockerfile builds unchanged
# (`--pull=never`). Kept between runs: nothing is done when an image of that name already carries
# the same Node. Needs root, debootstrap and podman. Prints the image's name.
#
# Usage: scripts/image/base.sh [node-version]   (default: scripts/image/node.sh's)
set -eu
here="$(cd "$(dirname "$0")" && pwd)"

node_dir="$(sh "$here/node.sh" "$@")"
version="$("$node_dir/bin/node" -p 'process.versions.node')"
major="${version%%.*}"
image="docker.io/library/node:$major-bookworm-slim"

if podman image exists "$image" &&
  [ "$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep '^NODE_VERSION=')" = "NODE_VERSION=$version" ]; then
  echo "$image"
  exit 0
fi

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
echo "base.sh: debootstrap bookworm ($mirror) into $rootfs" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >&2

# Node as the official image installs it: /usr/local/bin/node, npm and npx in /usr/local/lib.
cp -a "$node_dir/bin" "$node_dir/lib" "$node_dir/include" "$node_dir/share" "$rootfs/usr/local/"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# Slim, as debian:bookworm-slim and the official image are: no package lists, caches, manuals,
# translations, nor OpenSSL headers of other architectures.
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin "$rootfs/var/cache/apt/archives/"*.deb \
  "$rootfs/var/log/"*.log "$rootfs/usr/share/doc/"* "$rootfs/usr/share/man/"* "$rootfs/usr/share/info/"* \
  "$rootfs/usr/local/share/doc" "$rootfs/usr/local/share/man"
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
find "$rootfs/usr/local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name linux-x86_64 -exec rm -rf {} +

tar -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$version" \
  --change 'CMD ["node"]' \
  - "$image" >&2
echo "$image"
