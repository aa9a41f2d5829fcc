import { Logger } from '@nestjs/common';
import pg from 'pg';

export interface PgListenerOptions {
  connectionString: string;
  /** Names the session in pg_stat_activity (operators and tests find it by this). */
  applicationName: string;
  /** The callback of each channel, called with the payload of every NOTIFY on it ('' when none). */
  channels: Record<string, (payload: string) => void>;
  /** Called after each successful LISTEN, the first and every reconnection. */
  onUp?: () => void;
  /** Called when a listening connection is lost (not when stopped); messages sent meanwhile are lost. */
  onDown?: (error: Error) => void;
  /** Bound on connecting; also the longest the heartbeat waits for its answer. */
  timeoutMs: number;
  /** How often the connection proves it is alive; a stalled connection counts as lost. */
  heartbeatMs: number;
  /** Pause before the first reconnection, doubled after each failure up to reconnectMaxMs. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Names the listener in the warning logged when its connection is lost: `<what> lost (<reason>); ...`. */
  what: string;
  /** What the caller does without the connection, said in that warning. */
  whileDown?: string;
  /** Warns of a lost connection at most once per this many ms (a dead database would warn per attempt). */
  warnEveryMs?: number;
  logger: Logger;
}

/**
 * A dedicated PostgreSQL session (LISTEN needs one, not a pooled connection) that LISTENs on fixed
 * channels and hands each NOTIFY to its channel's callback. A heartbeat finds a connection that
 * accepts but never answers (a partition), which TCP alone does not. A lost connection is ended and
 * reopened with backoff until stop(); callers learn of both edges through onUp / onDown, and must
 * treat the time in between as "messages may have been missed".
 */
export class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private stopped = false;
  private lastWarned = -Infinity;
  private live = false;

  constructor(private readonly options: PgListenerOptions) {
    this.retryMs = options.reconnectMinMs;
  }

  /** True while a LISTEN is in place and the heartbeat answers. */
  get connected(): boolean {
    return this.live;
  }

  /** Connects once: later calls while connected, connecting or waiting to reconnect do nothing. */
  start(): Promise<void> {
    if (this.stopped || this.client || this.retryTimer) return this.connecting ?? Promise.resolve();
    this.connecting = this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    clearInterval(this.heartbeat);
    clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const { connectionString, applicationName, channels, timeoutMs } = this.options;
    const client = new pg.Client({
      connectionString,
      application_name: applicationName,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
    });
    client.on('notification', (message) => channels[message.channel]?.(message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    this.client = client;
    try {
      await client.connect();
      for (const channel of Object.keys(channels)) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.client !== client || this.stopped) return;
    this.retryMs = this.options.reconnectMinMs;
    this.heartbeat = setInterval(() => void this.beat(client), this.options.heartbeatMs);
    this.heartbeat.unref();
    this.live = true;
    this.options.onUp?.();
  }

  private async beat(client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const { timeoutMs } = this.options;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([client.query('SELECT 1'), timeout]);
    } catch (error) {
      this.lost(client, error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.live = false;
    clearInterval(this.heartbeat);
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    this.options.onDown?.(error);
    const { what, whileDown } = this.options;
    this.warn(
      `${what} lost (${error.message}); ${whileDown ? `${whileDown}; ` : ''}reconnecting in ${this.retryMs} ms`,
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.start();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.options.reconnectMaxMs, this.retryMs * 2);
  }

  private warn(message: string): void {
    if (Date.now() - this.lastWarned < (this.options.warnEveryMs ?? 0)) return;
    this.lastWarned = Date.now();
    this.options.logger.warn(message);
  }
}
