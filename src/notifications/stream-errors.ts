import { catalogueError } from '../common/errors/catalogue-error.js';

/** Errors of the notification stream's limits (the route documents them beside the shared catalogue's). */
export const STREAM_ERRORS = {
  tooManyStreams: (cap: number | string = '<NOTIFICATION_STREAMS_PER_USER>') =>
    catalogueError(
      'TOO_MANY_NOTIFICATION_STREAMS',
      429,
      `Too many open notification streams: at most ${cap} per user. Close one and try again.`,
      { summary: 'The caller already holds NOTIFICATION_STREAMS_PER_USER open streams (sent with Retry-After)' },
    ),
} as const;
