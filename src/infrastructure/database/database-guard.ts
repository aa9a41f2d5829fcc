import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { pgPool } from './database-pool.js';
import { destroySocket, ProbeConnection } from './probe-connection.js';

/** How often the liveness probe asks the database `SELECT 1`. */
const LIVENESS_INTERVAL_MS = 1000;
/** A probe unanswered for this long marks the database unreachable. */
const LIVENESS_TIMEOUT_MS = 2000;
/** The immediate second probe after a failed one (fresh connection, short timeout). */
const RETRY_TIMEOUT_MS = 750;
/** Requests allowed to queue for a connection per pooled connection before new ones are refused. */
export const MAX_WAITING_PER_CONNECTION = 20;

type ConnectCallback = (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error) => void) => void;

interface GuardedPool extends pg.Pool {
  connect(): Promise<pg.PoolClient>;
  connect(callback: ConnectCallback): void;
}

/** An error the exception filter maps to 503 (its pg codes are in UNAVAILABLE_CODES). */
function unavailable(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Makes the pool fail fast instead of hanging:
 * - a liveness probe on its own connection pings every second; when the database stops answering
 *   (stopped, or silent: a black-holed network answers TCP but never replies, which no per-query
 *   timeout can tell from a long query), connections in use are destroyed so their requests fail
 *   with 503 at once, and new checkouts are refused until a probe succeeds again — recovery needs
 *   nobody;
 * - at most MAX_WAITING_PER_CONNECTION × pool size checkouts may wait for a connection: beyond
 *   that the pool is exhausted and requests get 503 immediately instead of a growing queue
 *   (those that do wait give up after DB_CONNECTION_TIMEOUT_MS).
 */
@Injectable()
export class DatabaseGuard implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DatabaseGuard.name);
  private available = true;
  private readonly probe: ProbeConnection;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly clients = new Set<pg.Client>();
  private downSince: number | null = null;
  /** Checkouts refused since start, by reason (for metrics and tests). */
  readonly refused = { unavailable: 0, exhausted: 0 };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.probe = new ProbeConnection(config.databaseUrl ?? '', 'tracker-pipeline-liveness', LIVENESS_TIMEOUT_MS);
  }

  /** False while the liveness probe fails. */
  get isAvailable(): boolean {
    return this.available;
  }

  get maxWaiting(): number {
    return this.config.dbPoolSize * MAX_WAITING_PER_CONNECTION;
  }

  onApplicationBootstrap(): void {
    const pool = pgPool(this.dataSource) as GuardedPool;
    // Connections opened before this hook (migrations at boot) are in pg-pool's private list.
    for (const client of (pool as unknown as { _clients?: pg.Client[] })._clients ?? []) this.clients.add(client);
    pool.on('connect', (client) => this.clients.add(client as unknown as pg.Client));
    pool.on('remove', (client) => this.clients.delete(client as unknown as pg.Client));
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | void;
    // TypeORM checks out with a callback, pg's own pool.query with a promise: refuse both the same way.
    (pool as { connect: unknown }).connect = (callback?: ConnectCallback) => {
      const refusal = this.refusal(pool);
      if (!refusal) return connect(callback);
      if (callback) {
        process.nextTick(() => callback(refusal));
        return undefined;
      }
      return Promise.reject(refusal);
    };
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.probe.end();
  }

  private refusal(pool: pg.Pool): Error | null {
    if (!this.available) {
      this.refused.unavailable += 1;
      return unavailable('database unreachable (liveness probe failing)', '08006');
    }
    if (pool.waitingCount >= this.maxWaiting) {
      this.refused.exhausted += 1;
      return unavailable('database connection pool exhausted', '53300');
    }
    return null;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.check().finally(() => this.schedule()), LIVENESS_INTERVAL_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    let failure: Error | null = null;
    try {
      await this.ping();
    } catch (error) {
      failure = error as Error;
      // One failed probe says little on its own: its connection may have been closed (a backend
      // restart, a proxy's idle timeout), or its timeout may have fired late because this
      // process's event loop stalled (a long synchronous task, an overloaded host) while the
      // answer sat unread in the socket. Ask again at once on a fresh connection, with a short
      // timeout so a silent database is still declared down well within 5 s.
      if (!this.stopped) {
        try {
          await this.ping(RETRY_TIMEOUT_MS);
          failure = null;
        } catch (retryError) {
          failure = retryError as Error;
        }
      }
    }
    if (this.stopped) return;
    if (!failure) {
      if (!this.available) {
        this.logger.warn(`database reachable again after ${Date.now() - (this.downSince ?? Date.now())} ms`);
        this.available = true;
        this.downSince = null;
      }
      return;
    }
    if (this.available) {
      this.logger.error(`database unreachable, failing requests fast: ${failure.message}`);
      this.available = false;
      this.downSince = Date.now();
    }
    // Connections in use wait on a server that does not answer: end them so their requests fail now.
    for (const client of this.clients) destroySocket(client);
  }

  /** A failed ping has dropped the probe's connection: the next one opens a fresh one. */
  private async ping(timeoutMs = LIVENESS_TIMEOUT_MS): Promise<void> {
    await this.probe.query('SELECT 1', timeoutMs);
  }
}
