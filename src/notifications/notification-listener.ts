import { Logger } from '@nestjs/common';
import pg from 'pg';

/** PostgreSQL channel on which the commit of new notifications is announced (payload: the greatest new id). */
const NOTIFICATION_CHANNEL = 'tracker_notifications';
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/**
 * A dedicated session that LISTENs on the notification channel and calls `onWake` for every
 * announcement, and once more after each (re)connection: anything committed while it was away is
 * then picked up from the streams' cursors, so a lost connection loses nothing. It reconnects with
 * backoff until stopped. A session of its own because LISTEN needs one (not a pooled connection).
 */
export class NotificationListener {
  private readonly logger = new Logger(NotificationListener.name);
  private client: pg.Client | null = null;
  private stopped = false;
  private starting: Promise<void> | null = null;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  connected = false;

  constructor(
    private readonly connectionString: string,
    private readonly onWake: () => void,
  ) {}

  /** Connects once (later calls while connected or connecting do nothing). */
  start(): Promise<void> {
    if (this.stopped || this.client || this.starting) return this.starting ?? Promise.resolve();
    this.starting = this.connect().finally(() => (this.starting = null));
    return this.starting;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.starting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'tracker-pipeline-notifications',
      connectionTimeoutMillis: 3000,
      keepAlive: true,
    });
    client.on('notification', () => this.onWake());
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN ${NOTIFICATION_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.retry(error as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.connected = true;
    this.retryMs = RECONNECT_MIN_MS;
    this.onWake();
  }

  private lost(client: pg.Client, error: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    this.connected = false;
    client.end().catch(() => undefined);
    if (!this.stopped) this.retry(error ?? new Error('connection ended'));
  }

  private retry(error: Error): void {
    if (this.stopped) return;
    this.logger.warn(`notification listener disconnected (${error.message}); reconnecting in ${this.retryMs} ms`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.start(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
  }
}
