#!/bin/sh
# Builds the gateway's image from the Dockerfile, unchanged, with podman (as root), over the base
# scripts/image/base.sh makes when no registry of images is reachable. Prints the image's name.
#
# Usage: scripts/image/build.sh [tag]   (default: localhost/reservation-gateway:ci)
#
# --format docker: the OCI format has no HEALTHCHECK, and podman drops it without this flag.
# --runtime runc: crun refuses a machine whose cgroup mounts are mixed (v1 and v2).
# The registry reaches `npm ci` the way it reaches this machine: ~/.npmrc (or NPM_CONFIG_USERCONFIG)
# and the certificate authority NODE_EXTRA_CA_CERTS names go in as build secrets, not into a layer.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tag="${1:-localhost/reservation-gateway:ci}"

sh "$here/base.sh" >/dev/null

set -- --runtime runc build --pull=never --format docker --tag "$tag" \
  --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096
npmrc="${NPM_CONFIG_USERCONFIG:-$HOME/.npmrc}"
if [ -f "$npmrc" ]; then set -- "$@" --secret "id=npmrc,src=$npmrc"; fi
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  set -- "$@" --secret "id=ca,src=$NODE_EXTRA_CA_CERTS"
fi
podman "$@" "$root" >&2
echo "$tag"
