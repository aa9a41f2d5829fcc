import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of analytics. */
export const ANALYTICS_ERRORS = {
  analyticsFailed: e('ANALYTICS_FAILED', 500, 'Analytics calculation failed'),
} as const;
