import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { toNotificationResponse } from './notification.mapper.js';
import type { PgListener } from '../infrastructure/database/pg-listener.js';
import { notificationListener } from './notification-listener.js';
import { NotificationMetrics } from './notification-metrics.js';
import { NotificationsRepository, type Inbox, type NotificationRow } from './notifications.repository.js';
import { StreamCredentials } from './stream-credentials.js';
import { NOTIFICATION_ERRORS } from './notifications.errors.js';
import { StreamSlotsRepository } from './stream-slots.repository.js';
import type { StreamIdentity } from './stream-tickets.service.js';

/** How often open streams' credentials are checked again (revocation, deactivation, role change). */
const CHECK_MS = 1_000;
/** Safety net beside LISTEN: a missed announcement is picked up within this. */
const POLL_MS = 5_000;
const BATCH = 500;
/** How often this instance renews the slots of its open streams. */
const SLOT_RENEW_MS = 10_000;
/** A slot not renewed for this long belongs to an instance that is gone: it no longer counts. */
export const SLOT_STALE_SECONDS = 30;
/** Retry-After of a refused stream: by then a slot of a stream whose instance vanished has been freed. */
const RETRY_AFTER_SECONDS = SLOT_STALE_SECONDS;
/** A client that stops reading is dropped once this much is waiting for it (it reconnects with Last-Event-ID). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** The longest delay a timer takes; a later expiry (a key's, or none) is left to the credential check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface OpenStream {
  identity: StreamIdentity;
  /** Its slot in notification_stream_slots (the per-user cap). */
  slot: string;
  res: Response;
  /** The last notification id written to it. */
  cursor: bigint;
  expiry: NodeJS.Timeout | undefined;
  closed: boolean;
}

/**
 * The open notification streams of this instance. A commit of new notifications is announced on a
 * PostgreSQL channel (notificationListener); each wake-up reads, in one query for every stream of
 * this instance, the notifications above the streams' cursors and writes each to the streams of
 * its user. Notification ids become visible in increasing order (the database assigns them under
 * a lock at commit), so "above the cursor" never skips one. Before writing, and every second, the
 * streams' credentials are checked again: a revoked token or API key, a deactivated user or one
 * that lost its roles ends the stream at once; so does the credential's expiry, and the app's
 * shutdown. A stream on a key narrowed to clients carries only the notifications of their events.
 */
@Injectable()
export class NotificationStreams implements OnModuleDestroy {
  private readonly logger = new Logger(NotificationStreams.name);
  private readonly streams = new Set<OpenStream>();
  private readonly listener: PgListener;
  /** Names this instance's slots, so it renews them and drops them all at shutdown. */
  private readonly instanceId = randomUUID();
  private timers: NodeJS.Timeout[] = [];
  private fetching: Promise<void> | null = null;
  private again = false;
  private stopping = false;

  constructor(
    private readonly repository: NotificationsRepository,
    private readonly metrics: NotificationMetrics,
    private readonly credentials: StreamCredentials,
    private readonly slots: StreamSlotsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.listener = notificationListener((config.databaseListenUrl ?? config.databaseUrl) as string, () => this.wake());
  }

  get openCount(): number {
    return this.streams.size;
  }

  /**
   * Starts an SSE response for `identity`: a slot under the per-user cap (else 429 and nothing is
   * sent), headers, then the replay of the user's notifications above `lastEventId` when given —
   * the newest NOTIFICATION_STREAM_REPLAY_MAX of them, announced by a `replay-truncated` event when
   * there were more — then live notifications until the stream ends.
   */
  async open(res: Response, identity: StreamIdentity, lastEventId: string | null): Promise<void> {
    const slot = randomUUID();
    const cap = this.config.notificationStreamsPerUser;
    if (
      !(await this.slots.take(
        { id: slot, userId: identity.userId, instanceId: this.instanceId },
        cap,
        SLOT_STALE_SECONDS,
      ))
    )
      throw new DomainError(NOTIFICATION_ERRORS.tooManyStreams(cap), {
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      });
    const expiresIn = Math.max(0, identity.tokenExpiresAt - Date.now());
    const stream: OpenStream = {
      identity,
      slot,
      res,
      cursor: 0n,
      closed: false,
      expiry: expiresIn <= MAX_TIMER_MS ? setTimeout(() => this.close(stream), expiresIn) : undefined,
    };
    stream.expiry?.unref();
    // The client may have gone while the slot was taken: its 'close' has passed already.
    if (!res.socket || res.socket.destroyed) return this.close(stream, false);
    res.on('close', () => this.close(stream, false));
    this.startBackground();
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no');
    res.setHeader('Connection', 'close');
    res.flushHeaders();
    res.write(': stream open\n\n');
    try {
      if (lastEventId !== null) await this.replay(stream, lastEventId);
      else stream.cursor = BigInt(await this.repository.lastId());
    } catch (error) {
      this.logger.warn(`notification stream replay failed: ${(error as Error).message}`);
      this.close(stream);
      return;
    }
    if (stream.closed || this.stopping) return this.close(stream);
    this.streams.add(stream);
    this.metrics.streamOpened();
    this.wake();
  }

  /**
   * The user's notifications above `lastEventId`, in id order: at most the newest
   * NOTIFICATION_STREAM_REPLAY_MAX, one bounded query whatever the backlog. When there were more, a
   * `replay-truncated` event (no id, so Last-Event-ID is unchanged) first says how many at most were
   * sent and the id of the first one: what lies between is left to GET /notifications.
   */
  private async replay(stream: OpenStream, lastEventId: string): Promise<void> {
    const max = this.config.notificationStreamReplayMax;
    const newest = await this.repository.newestAfter(inboxOf(stream.identity), lastEventId, max + 1);
    const rows = newest.slice(0, max).reverse();
    stream.cursor = BigInt(lastEventId);
    if (newest.length > max) {
      const notice = { replay_limit: max, first_id: Number(rows[0].id) };
      this.send(stream, `event: replay-truncated\ndata: ${JSON.stringify(notice)}\n\n`);
    }
    for (const row of rows) this.write(stream, row, false);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const stream of [...this.streams]) this.close(stream);
    await this.slots.releaseInstance(this.instanceId).catch((error: Error) => this.slotWarning(error));
    await this.listener.stop();
  }

  private startBackground(): void {
    if (this.timers.length > 0 || this.stopping) return;
    void this.listener.start();
    const every = (ms: number, work: () => void) => {
      const timer = setInterval(work, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.config.notificationStreamKeepaliveSeconds * 1000, () => {
      for (const stream of this.streams) this.send(stream, ': keepalive\n\n');
    });
    every(CHECK_MS, () => void this.checkCredentials().catch(() => undefined));
    every(POLL_MS, () => this.wake());
    every(SLOT_RENEW_MS, () => void this.slots.renew(this.instanceId).catch((error: Error) => this.slotWarning(error)));
  }

  /** Asks for a delivery round; rounds never overlap, and one asked for during a round runs after it. */
  private wake(): void {
    if (this.stopping) return;
    this.again = true;
    this.fetching ??= this.deliverRounds().finally(() => (this.fetching = null));
  }

  private async deliverRounds(): Promise<void> {
    while (this.again && !this.stopping) {
      this.again = false;
      try {
        await this.deliver();
      } catch (error) {
        // The database is away: the cursors stay, the next wake-up (poll, reconnection) resumes.
        this.logger.warn(`notification delivery failed: ${(error as Error).message}`);
        return;
      }
    }
  }

  private async deliver(): Promise<void> {
    if (this.streams.size === 0) return;
    await this.checkCredentials();
    const open = [...this.streams];
    if (open.length === 0) return;
    const users = [...new Set(open.map((s) => s.identity.userId))];
    let from = open.reduce((min, s) => (s.cursor < min ? s.cursor : min), open[0].cursor);
    for (;;) {
      const rows = await this.repository.afterForUsers(users, from.toString(), BATCH);
      for (const row of rows) {
        for (const stream of open) if (receives(stream.identity, row)) this.write(stream, row, true);
      }
      if (rows.length > 0) from = BigInt(rows[rows.length - 1].id);
      if (rows.length < BATCH) break;
    }
    // Everything of these users up to `from` has been read: a stream that got none of it is still there.
    for (const stream of open) if (stream.cursor < from) stream.cursor = from;
  }

  /** Ends every stream whose token expired or was revoked, or whose user may no longer use it. */
  private async checkCredentials(): Promise<void> {
    if (this.streams.size === 0) return;
    const open = [...this.streams];
    const valid = await this.credentials.valid(open.map((s) => s.identity));
    for (const stream of open) if (!valid.has(stream.identity)) this.close(stream);
  }

  private write(stream: OpenStream, row: NotificationRow, live: boolean): void {
    const id = BigInt(row.id);
    if (stream.closed || id <= stream.cursor) return;
    stream.cursor = id;
    const body = JSON.stringify(toNotificationResponse(row));
    this.send(stream, `id: ${row.id}\nevent: notification\ndata: ${body}\n\n`);
    this.metrics.deliveredOne(live ? row.created_at : null);
  }

  private send(stream: OpenStream, chunk: string): void {
    if (stream.closed) return;
    stream.res.write(chunk);
    if (stream.res.writableLength > MAX_BUFFERED_BYTES) this.close(stream);
  }

  private slotWarning(error: Error): void {
    this.logger.warn(`notification stream slots: ${error.message}`);
  }

  private close(stream: OpenStream, end = true): void {
    if (stream.closed) return;
    stream.closed = true;
    clearTimeout(stream.expiry);
    // At shutdown every slot of the instance goes in one statement (onModuleDestroy).
    if (!this.stopping) void this.slots.release(stream.slot).catch((error: Error) => this.slotWarning(error));
    if (this.streams.delete(stream)) this.metrics.streamClosed();
    if (end && !stream.res.writableEnded) stream.res.end();
  }
}

/** Whose notifications a stream carries: its user's, narrowed to a key's clients when it lives on such a key. */
function inboxOf(identity: StreamIdentity): Inbox {
  return { userId: identity.userId, clientIds: identity.apiKey?.clientIds ?? null };
}

function receives(identity: StreamIdentity, row: NotificationRow): boolean {
  if (identity.userId !== row.user_id) return false;
  const clients = identity.apiKey?.clientIds ?? null;
  return clients === null || clients.includes(row.event.client_id);
}
