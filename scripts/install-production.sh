#!/bin/sh
# The production install of a built tree: exactly the production dependencies the lock file names,
# none of the development ones (TypeScript, tsx, vitest, the benchmark tools). The image's runtime
# stage (Dockerfile) runs it, and test/e2e/production-install.test.ts runs it in an empty folder.
#
# Usage: scripts/install-production.sh [tree]   (default: the folder above this script)
# The tree holds package.json, package-lock.json and dist/ from `npm run build`; afterwards
# `node dist/main.js` (or `npm start`) runs there.
set -eu

tree="${1:-$(dirname "$0")/..}"
cd "$tree"
for needed in package.json package-lock.json dist/main.js dist/.build-stamp.json; do
  if [ ! -e "$needed" ]; then
    echo "install-production: $(pwd)/$needed is missing: run \`npm run build\` and copy package.json, package-lock.json and dist/" >&2
    exit 1
  fi
done

# --ignore-scripts: no production dependency needs an install script to work (the only one that has
# one, protobufjs, checks versions), and none should run code while the image is built.
npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# What only development reads, never Node at run time: source maps, type declarations, markdown.
find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.md' \) -delete
