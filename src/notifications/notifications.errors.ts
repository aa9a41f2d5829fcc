import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of the notification inbox. */
export const NOTIFICATION_ERRORS = {
  notificationNotFound: e('NOTIFICATION_NOT_FOUND', 404, 'Notification not found', {
    summary: "Missing, or another user's",
  }),
} as const;
