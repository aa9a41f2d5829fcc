import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { Db, sql } from '../database/db.js';
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
 * The tier is live only while this listener is connected and answering its heartbeat; when the
 * connection drops or stalls the tier is emptied and bypassed (messages sent meanwhile are lost),
 * and emptied again once LISTEN is back.
 */
@Injectable()
export class InvalidationBus implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(InvalidationBus.name);
  private client: pg.Client | null = null;
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private closed = false;
  private lastWarned = 0;
  private readonly listeners: Listener[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly near: NearCache,
    private readonly db: Db,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.nearCacheMaxBytes === 0 || !this.config.databaseUrl) return;
    await Promise.race([this.connect(), new Promise((resolve) => setTimeout(resolve, FIRST_CONNECT_WAIT_MS).unref())]);
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

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.config.databaseUrl,
      keepAlive: true,
      connectionTimeoutMillis: HEARTBEAT_TIMEOUT_MS,
      application_name: 'tps-cache-invalidation',
    });
    client.on('notification', (message) => {
      if (message.channel === INVALIDATION_CHANNEL && message.payload) this.deliver(message.payload.split(' '));
    });
    client.on('error', (error) => this.down(client, error));
    client.on('end', () => this.down(client, new Error('connection ended')));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${INVALIDATION_CHANNEL}`);
    } catch (error) {
      this.down(client, error as Error);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.near.setLive(true);
    this.heartbeat = setInterval(() => void this.beat(client), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** A connection that accepts but never answers (a partition) is found by the heartbeat, not by TCP. */
  private async beat(client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HEARTBEAT_TIMEOUT_MS} ms`)), HEARTBEAT_TIMEOUT_MS);
    });
    try {
      await Promise.race([client.query('SELECT 1'), timeout]);
    } catch (error) {
      this.down(client, error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  private down(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.near.setLive(false);
    clearInterval(this.heartbeat);
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.warn(`invalidation listener lost (${error.message}); the in-process cache tier is off until it reconnects`);
    this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnect.unref();
  }

  private warn(message: string): void {
    // A dead database would log once per reconnect attempt; once per 10 s is enough.
    if (Date.now() - this.lastWarned < 10_000) return;
    this.lastWarned = Date.now();
    this.logger.warn(message);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = null;
    this.near.setLive(false);
    if (client) await client.end().catch(() => undefined);
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
