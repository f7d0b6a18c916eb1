// First: the young generation is held small while everything below loads.
import './config/young-generation.ts';
import './config/node-env.ts';
import { CHECK_FLAG, checkConfiguration } from './config/check.ts';
import { ConfigError, loadConfig, type ReloadableFile } from './config/environment.ts';
import { watchFiles } from './config/file-watch.ts';
import { youngGenerationMayGrow } from './config/young-generation.ts';
import type { Emulator } from './emulator/server.ts';
import { createGateway } from './gateway.ts';
import { type Listening, listen, PortUnavailableError } from './http/listeners.ts';
import { createLogger } from './observability/logger.ts';
import type { RedisConnection } from './redis/connection.ts';
import type { SharedStores } from './upstream/stores/redis-stores.ts';

// `--check`: the settings and every file they name checked and described, nothing started: no
// listener, no Redis, no emulator, no upstream call (src/config/check.ts, docs/operating.md).
if (process.argv.includes(CHECK_FLAG)) process.exit(checkConfiguration());

/** Reads the settings, starts the emulator when no upstream is set, and serves the gateway. */
let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}
const logger = createLogger(config.logLevel);
for (const warning of config.warnings) logger.warn(warning);
// A promise nobody awaited must not take the whole gateway down with it: log it and serve on.
process.on('unhandledRejection', (reason) => {
  logger.error({ err: reason instanceof Error ? reason : String(reason) }, 'unhandled rejection');
});

// With REDIS_URL, replicas share tokens, budget and cache; a Redis not reachable at start is a
// setting to fix, like a bad value (exit 2), rather than a gateway that half works.
let shared: { redis: RedisConnection; stores: SharedStores } | undefined;
if (config.redis) {
  // Imported only here: ioredis costs start time and memory that a gateway without Redis never uses.
  const { openRedis, RedisUnreachableError } = await import('./redis/connection.ts');
  const { sharedStores } = await import('./upstream/stores/redis-stores.ts');
  try {
    const redis = await openRedis(config.redis);
    const stores = await sharedStores(redis, {
      windowMs: config.upstream.rateWindowMs,
      timeoutMs: config.upstream.timeoutMs,
      fallbackShare: config.redis.fallbackShare,
      logger: logger.child({ component: 'redis' }),
    });
    shared = { redis, stores };
  } catch (error) {
    if (!(error instanceof RedisUnreachableError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  logger.info({ prefix: config.redis.prefix }, 'tokens, rate budget and cache are shared through Redis');
}

let emulator: Emulator | undefined;
let upstreamBaseUrl = config.upstreamBaseUrl;
if (!upstreamBaseUrl) {
  // Imported only here: the emulator and its demo-data libraries cost start time and memory that a
  // gateway over a real service never uses.
  const { startEmulator } = await import('./emulator/server.ts');
  emulator = await startEmulator({ port: 0 });
  upstreamBaseUrl = emulator.url;
  logger.info(
    { url: emulator.url },
    'no UPSTREAM_BASE_URL: serving over the embedded emulator and its demo data (licensees 1001 and 2002)',
  );
}

const gateway = createGateway({ ...config, upstreamBaseUrl }, logger, { shared });
let listening: Listening;
try {
  listening = await listen(
    { clients: gateway.yoga, operators: gateway.operators, acceptWebSockets: gateway.acceptWebSockets },
    config,
  );
} catch (error) {
  // A port taken (a second copy on this host, another exporter on OPS_PORT 9464) is a setting to
  // fix, like a bad value: one line naming it and the address, exit 2, rather than a crash's stack.
  if (!(error instanceof PortUnavailableError)) throw error;
  console.error(error.message);
  process.exit(2);
}
const { url, opsUrl } = listening;
logger.info(
  {
    url,
    ops: opsUrl,
    opsAuth: config.opsToken ? 'token' : 'loopback connections',
    auth: config.auth.mode,
    licensees: config.licensees.map((licensee) => licensee.id),
  },
  'gateway ready',
);
// LICENSEES_FILE and TRUSTED_DOCUMENTS_FILE are read again when they change on disk, however
// they change, and on SIGHUP, which never stops the gateway (docs/operating.md, "Reloads").
const files = Object.entries(config.files) as [ReloadableFile, string][];
const watching = watchFiles(
  files.map(([, path]) => path),
  (changed) => gateway.reload(files.filter(([, path]) => changed.includes(path)).map(([file]) => file)),
);
process.on('SIGHUP', () => {
  logger.info('SIGHUP: reading LICENSEES_FILE and TRUSTED_DOCUMENTS_FILE again');
  gateway.reload();
});
console.log(`Reservation gateway ready at ${url} (open it in a browser for GraphiQL)`);
console.log(`Operators' pages at ${opsUrl}/status and ${opsUrl}/metrics`);
youngGenerationMayGrow();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => process.exit(1), 15_000).unref();
  // Stop accepting, let requests in flight finish, drop idle keep-alive connections; subscription
  // streams end (their clients resume with `since`), or the server would wait for them.
  gateway.changeFeeds.close();
  watching.stop();
  // Both listeners: the operators' port too, or the process would wait on Prometheus' keep-alive.
  await listening.stop();
  await gateway.close();
  await shared?.redis.close();
  await emulator?.close();
  clearTimeout(force);
  console.log('Reservation gateway stopped cleanly');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
