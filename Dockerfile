# syntax=docker/dockerfile:1
# The gateway's image: `docker build -t reservation-gateway .` (docs/deploying.md).
# Settings are the environment variables of docs/settings.md; LICENSEES_FILE and TRUSTED_DOCUMENTS_FILE
# are files mounted into the container, the licensees' upstream keys come from the environment.

# Node 24 (LTS until 2028-04-30): the major package.json's engines, README, docs/deploying.md and .ci/run's second test
# run name (scripts/image/node.sh pins the release CI builds its stand-in base from).
#
# The registry's settings reach `npm ci` as build secrets, never a layer: `npmrc` (a private
# registry or its token) is mounted as root's ~/.npmrc, `ca` (a proxy's certificate authority) is
# given to Node as NODE_EXTRA_CA_CERTS. scripts/image/build.sh passes them when the machine has them.

# Build stage: every dependency, then dist/ (the gateway and the emulator as plain JavaScript).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc --mount=type=secret,id=ca,target=/run/secrets/ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build
# The runtime tree: the files `node dist/main.js`, the emulator and `npm start` can load, traced
# from this stage's tree (scripts/image/trace.mjs, @vercel/nft): the production dependencies' module
# files Node reads and nothing else, without a second install. No source maps (Node is not started
# with --enable-source-maps), types, tests, dev dependencies, npm cache or logs.
RUN node scripts/image/trace.mjs /app /runtime

# Runtime stage: the traced tree alone. test/e2e/production-install.test.ts runs such a tree too.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000
WORKDIR /app
COPY --from=build /runtime ./
# The image's `node` user by number, so that Kubernetes' runAsNonRoot can verify it. The files
# stay root's: the gateway writes nothing, and runs on a read-only root filesystem.
USER 1000:1000
# 4000: the clients' port. 9464: the operators' port (OPS_PORT: /metrics, /status), which listens on
# 127.0.0.1 inside the container unless OPS_HOST=0.0.0.0 is set, and then OPS_TOKEN is required.
EXPOSE 4000 9464
# Slim images have no curl: Node's own fetch asks /health (which answers any Host).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself (main.ts finishes requests in flight, then exits).
# V8's heap sized from the container's memory limit (src/config/heap.ts, docs/deploying.md "Sizing"):
# the old generation 60 % of it, semi-spaces of 16 MiB, and a collection once the old generation has
# tripled. V8's own sizing under a limit costs several times the CPU per 1000-record answer.
CMD ["node", "--max-old-space-size-percentage=60", "--max-semi-space-size=16", "--heap-growing-percent=200", "dist/main.js"]
