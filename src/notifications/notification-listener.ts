import { Logger } from '@nestjs/common';
import { PgListener } from '../infrastructure/database/pg-listener.js';

/** PostgreSQL channel on which the commit of new notifications is announced (payload: the greatest new id). */
const NOTIFICATION_CHANNEL = 'tracker_notifications';
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 3000;
const HEARTBEAT_MS = 5000;

/**
 * The listening session of the notification streams: calls `onWake` for every announcement, and
 * once more after each (re)connection, so anything committed while it was away is then picked up
 * from the streams' cursors and a lost connection loses nothing. It reconnects with backoff until
 * stopped (PgListener).
 */
export function notificationListener(connectionString: string, onWake: () => void): PgListener {
  return new PgListener({
    connectionString,
    applicationName: 'tracker-pipeline-notifications',
    channels: { [NOTIFICATION_CHANNEL]: () => onWake() },
    onUp: onWake,
    timeoutMs: CONNECT_TIMEOUT_MS,
    heartbeatMs: HEARTBEAT_MS,
    reconnectMinMs: RECONNECT_MIN_MS,
    reconnectMaxMs: RECONNECT_MAX_MS,
    what: 'notification listener',
    logger: new Logger('NotificationListener'),
  });
}
