import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of the notification inbox and live stream. */
export const NOTIFICATION_ERRORS = {
  notificationNotFound: e('NOTIFICATION_NOT_FOUND', 404, 'Notification not found', {
    summary: "Missing, or another user's",
  }),
  tooManyStreams: (cap: number | string = '<NOTIFICATION_STREAMS_PER_USER>') =>
    e(
      'TOO_MANY_NOTIFICATION_STREAMS',
      429,
      `Too many open notification streams: at most ${cap} per user. Close one and try again.`,
      { summary: 'The caller already holds NOTIFICATION_STREAMS_PER_USER open streams (sent with Retry-After)' },
    ),
} as const;
