import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PeriodicJob } from '../infrastructure/scheduling/periodic-job.js';
import { ApiKeysRepository } from './api-keys.repository.js';

/** Between flushes: with this pause `last_used_at` is never more than a minute behind (a flush takes milliseconds). */
const FLUSH_INTERVAL_MS = 30_000;

/**
 * `last_used_at` of API keys, kept to within a minute without a write per request: each request
 * notes its key's id and time in memory, and every 30 s one set-based UPDATE records the latest
 * use of every key noted since (and once more when the instance shuts down). A flush that fails
 * keeps its uses for the next one.
 */
@Injectable()
export class ApiKeyUsage implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ApiKeyUsage.name);
  private pending = new Map<number, number>();
  private readonly job = new PeriodicJob(() => this.flush(), {
    what: 'recording API key use',
    logger: this.logger,
    intervalMs: FLUSH_INTERVAL_MS,
  });

  constructor(private readonly keys: ApiKeysRepository) {}

  /** The key was used now (one Map write: no I/O on the request path). */
  used(keyId: number): void {
    this.pending.set(keyId, Date.now());
  }

  /** Records the uses noted since the last flush; answers how many keys it recorded. */
  async flush(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const batch = this.pending;
    this.pending = new Map();
    try {
      const ids = [...batch.keys()];
      await this.keys.markUsed(
        ids,
        ids.map((id) => new Date(batch.get(id)!)),
      );
      return ids.length;
    } catch (error) {
      // Later uses noted meanwhile win over the ones being put back.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      throw error;
    }
  }

  onApplicationBootstrap(): void {
    this.job.start(FLUSH_INTERVAL_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
    await this.flush().catch((error: unknown) =>
      this.logger.warn(`recording API key use at shutdown failed: ${(error as Error).message}`),
    );
  }
}
