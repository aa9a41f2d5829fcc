import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of API key management (the guard's errors for keys — 401, 403, 429 — are the common auth errors). */
export const API_KEY_ERRORS = {
  apiKeyNotFound: e('API_KEY_NOT_FOUND', 404, 'API key not found', {
    summary: "Missing, or another user's key (for a non-admin)",
  }),
} as const;
