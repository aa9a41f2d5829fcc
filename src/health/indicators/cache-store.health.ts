import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { CacheService } from '../../infrastructure/cache/cache.service.js';
import { COMPONENT_TIMEOUT_MS } from './component-timeout.js';

/**
 * `cache_store` component: a set/get/delete round trip on the configured store (Redis, or the
 * in-process memory store when REDIS_URL is unset — that counts as a working store).
 */
@Injectable()
export class CacheStoreHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly cache: CacheService,
  ) {}

  check() {
    return this.health
      .check('cache_store')
      .attempt(async () => {
        await this.cache.ping(COMPONENT_TIMEOUT_MS);
        return { store: this.cache.storeKind };
      })
      .withTimeout(COMPONENT_TIMEOUT_MS);
  }
}
