import type { Config } from '../../src/config/environment.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { openRedis, type RedisConnection } from '../../src/redis/connection.ts';
import { sharedStores } from '../../src/upstream/stores/redis-stores.ts';

/** A gateway in this process, sharing Redis as a replica does, with its own connection. */
export interface GatewayOnRedis {
  gateway: Gateway;
  connection: RedisConnection;
}

/**
 * `count` gateways of one configuration (its REDIS_URL set) in this process, each on a Redis
 * connection of its own, over `upstreamBaseUrl`. `hearing(n, connection)` may stand in for what
 * replica `n` hears (a pub/sub socket read late); by default its own connection.
 */
export async function gatewaysOnRedis(
  config: Config,
  upstreamBaseUrl: string,
  count: number,
  hearing: (n: number, connection: RedisConnection) => RedisConnection = (_n, connection) => connection,
): Promise<GatewayOnRedis[]> {
  const replicas: GatewayOnRedis[] = [];
  for (let n = 0; n < count; n++) {
    const connection = await openRedis(config.redis!);
    const stores = await sharedStores(connection, { windowMs: 60_000, timeoutMs: 5_000, fallbackShare: 1 / 3 });
    replicas.push({
      gateway: createGateway({ ...config, upstreamBaseUrl }, undefined, {
        shared: { redis: hearing(n, connection), stores },
      }),
      connection,
    });
  }
  return replicas;
}

/** Closes each gateway, then its connection. */
export async function closeGateways(replicas: readonly GatewayOnRedis[]): Promise<void> {
  for (const { gateway, connection } of replicas) {
    await gateway.close();
    await connection.close();
  }
}
