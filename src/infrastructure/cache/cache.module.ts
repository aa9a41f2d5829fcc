import { Global, Module } from '@nestjs/common';
import { CacheModule as NestCacheModule } from '@nestjs/cache-manager';
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { CacheInvalidation } from './cache-invalidation.js';
import { CachedAnswers } from './cached-answers.js';
import { CacheService } from './cache.service.js';
import { InvalidationBus } from './invalidation-bus.js';
import { NearCache } from './near-cache.js';
import { TieredCache } from './tiered-cache.js';
import { connectRedis, REDIS_CLIENT, type RedisConnection } from './redis-client.js';

/** The single Redis connection of the process (null without REDIS_URL). */
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => (c.redisUrl ? connectRedis(c.redisUrl) : null),
    },
  ],
  exports: [REDIS_CLIENT],
})
class RedisModule {}

/**
 * @nestjs/cache-manager over Redis (@keyv/redis) when REDIS_URL is set, else an in-process store
 * (CacheService), and in front of it the in-process tier (NearCache) kept coherent across instances
 * by InvalidationBus; TieredCache reads through both. CacheInvalidation turns writes into invalidations.
 */
@Global()
@Module({
  imports: [
    RedisModule,
    NestCacheModule.registerAsync({
      imports: [RedisModule],
      inject: [APP_CONFIG, REDIS_CLIENT],
      useFactory: (config: AppConfig, redis: RedisConnection | null) => ({
        ttl: config.cacheTtlSeconds * 1000,
        stores: redis
          ? [
              new Keyv({
                store: new KeyvRedis(redis as never, { throwOnErrors: true }),
                useKeyPrefix: false,
                // Plain JSON: Keyv's default (de)serializer walks every value in JavaScript (a reviver
                // per node) to support Buffers we never cache — the largest cost of a cache hit.
                serialize: (data) => JSON.stringify(data),
                deserialize: (data) => JSON.parse(data) as never,
              }),
            ]
          : undefined,
      }),
    }),
  ],
  providers: [CacheService, NearCache, InvalidationBus, TieredCache, CacheInvalidation, CachedAnswers],
  exports: [CacheService, NearCache, InvalidationBus, TieredCache, CacheInvalidation, CachedAnswers, RedisModule],
})
export class CacheModule {}
