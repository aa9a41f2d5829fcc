import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of the alert routes. */
export const ALERT_ERRORS = {
  alertNotFound: e('ALERT_NOT_FOUND', 404, 'Alert not found', { summary: 'Missing, or of a tracker you cannot see' }),
} as const;
