import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { Db, sql } from '../database/db.js';
import { PgListener } from '../database/pg-listener.js';
import { NearCache } from './near-cache.js';

/**
 * The PostgreSQL channel of cache invalidations. Triggers send on it too (a user row changed or
 * was deleted, a token was revoked, a latest location changed): every change made in the database,
 * by any instance, the CLI or by hand, reaches every instance.
 */
const INVALIDATION_CHANNEL = 'tps_cache_invalidation';
/** A NOTIFY payload is limited to 8000 bytes; keys are sent in messages below this size. */
const MAX_PAYLOAD = 7000;
/** How often the listening connection proves it is alive, and how long it may take to answer. */
const HEARTBEAT_MS = 1000;
const HEARTBEAT_TIMEOUT_MS = 2000;
const RECONNECT_MS = 1000;
/** Boot waits this long for the first LISTEN; the tier stays off until it succeeds. */
const FIRST_CONNECT_WAIT_MS = 3000;

type Listener = (keys: string[]) => void;

/**
 * Cross-instance invalidation of the in-process tier over PostgreSQL LISTEN/NOTIFY — not Redis
 * pub/sub, so it keeps working while Redis is down, and a NOTIFY sent inside a transaction is
 * delivered only when it commits. A message is a space-separated list of near-cache keys.
 *
 * The tier is live only while the listening connection (PgListener) is connected and answering its
 * heartbeat; when the connection drops or stalls the tier is emptied and bypassed (messages sent
 * meanwhile are lost), and emptied again once LISTEN is back.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(InvalidationBus.name);
  private listener: PgListener | null = null;
  private lastWarned = 0;
  private readonly listeners: Listener[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly near: NearCache,
    private readonly db: Db,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.nearCacheMaxBytes === 0 || !this.config.databaseUrl) return;
    this.listener = new PgListener({
      connectionString: this.config.databaseUrl,
      applicationName: 'tps-cache-invalidation',
      channels: { [INVALIDATION_CHANNEL]: (payload) => payload && this.deliver(payload.split(' ')) },
      onUp: () => this.near.setLive(true),
      onDown: () => this.near.setLive(false),
      timeoutMs: HEARTBEAT_TIMEOUT_MS,
      heartbeatMs: HEARTBEAT_MS,
      reconnectMinMs: RECONNECT_MS,
      reconnectMaxMs: RECONNECT_MS,
      what: 'invalidation listener',
      whileDown: 'the in-process cache tier is off until it reconnects',
      warnEveryMs: 10_000,
      logger: this.logger,
    });
    await Promise.race([
      this.listener.start(),
      new Promise((resolve) => setTimeout(resolve, FIRST_CONNECT_WAIT_MS).unref()),
    ]);
  }

  /** Also called for messages this process sent itself (after its own local invalidation). */
  onMessage(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Invalidates the keys here at once and on every other instance within moments. Inside a
   * transaction the other instances hear of it when it commits. Never throws: a failed send is
   * logged, and the tier's TTL bounds what the other instances may still serve.
   */
  async publish(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.deliver(keys);
    if (this.config.nearCacheMaxBytes === 0) return;
    try {
      for (const payload of chunks(keys))
        await this.db.execute(sql`SELECT pg_notify(${INVALIDATION_CHANNEL}, ${payload})`);
    } catch (error) {
      this.warn(`could not publish a cache invalidation: ${(error as Error).message}`);
    }
  }

  private deliver(keys: string[]): void {
    this.near.invalidate(keys);
    for (const listener of this.listeners) listener(keys);
  }

  private warn(message: string): void {
    // A dead database would log once per publish; once per 10 s is enough.
    if (Date.now() - this.lastWarned < 10_000) return;
    this.lastWarned = Date.now();
    this.logger.warn(message);
  }

  async onModuleDestroy(): Promise<void> {
    this.near.setLive(false);
    await this.listener?.stop();
  }
}

/** Keys joined into payloads under the NOTIFY size limit. */
function chunks(keys: string[]): string[] {
  const out: string[] = [];
  let current = '';
  for (const key of keys) {
    if (current && current.length + key.length + 1 > MAX_PAYLOAD) {
      out.push(current);
      current = '';
    }
    current = current ? `${current} ${key}` : key;
  }
  if (current) out.push(current);
  return out;
}
