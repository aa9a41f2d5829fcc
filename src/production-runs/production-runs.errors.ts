import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of production runs. */
export const PRODUCTION_RUN_ERRORS = {
  productionRunNotFound: e('PRODUCTION_RUN_NOT_FOUND', 404, 'Production run not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
} as const;
