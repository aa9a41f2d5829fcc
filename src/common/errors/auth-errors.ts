import { catalogueError as e } from './catalogue-error.js';

/** Authentication and authorization errors every protected route can answer (the guard's). */
export const AUTH_ERRORS = {
  notAuthenticated: e('NOT_AUTHENTICATED', 401, 'Not authenticated', { summary: 'No bearer token or API key' }),
  invalidCredentials: e('INVALID_CREDENTIALS', 401, 'Could not validate credentials', {
    summary: 'Token invalid, expired or revoked; API key unknown, malformed, revoked or expired, or its owner inactive',
  }),
  notEnoughPermissions: e('NOT_ENOUGH_PERMISSIONS', 403, 'Not enough permissions', {
    summary: 'Role not allowed, or an API key whose scope does not cover the route',
  }),
  tooManyKeyAttempts: e('TOO_MANY_API_KEY_ATTEMPTS', 429, 'Too many failed API key attempts. Try again later.', {
    summary:
      'Requests with an API key from an IP that sent more than 20 bad keys within a minute (sent with Retry-After, in seconds)',
  }),
} as const;
