import { Logger } from '@nestjs/common';
import { createClient } from '@keyv/redis';
/* eslint-disable @typescript-eslint/no-empty-object-type */

export const REDIS_CLIENT = Symbol('REDIS_CLIENT');
export type RedisConnection = ReturnType<typeof createClient<{}, {}, {}, 2, {}>>;

/**
 * A Redis client that fails fast instead of queueing while disconnected (so a dead Redis never
 * stalls a request) and reconnects in the background. Boot does not wait for it.
 */
export function connectRedis(url: string): RedisConnection {
  const logger = new Logger('Redis');
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 1000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
    },
  });
  let lastLogged = 0;
  client.on('error', (error: Error) => {
    // Reconnect loops emit an error per attempt; log at most every 10 s.
    if (Date.now() - lastLogged > 10_000) {
      lastLogged = Date.now();
      logger.warn(`Redis error: ${error.message}`);
    }
  });
  client.connect().catch(() => undefined);
  return client;
}
