import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { CacheService } from '../../infrastructure/cache/cache.service.js';
import { COMPONENT_TIMEOUT_MS, componentCheck } from './component-timeout.js';

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
    return componentCheck(this.health, 'cache_store', async () => {
      await this.cache.ping(COMPONENT_TIMEOUT_MS);
      return { store: this.cache.storeKind };
    });
  }
}
