import { catalogueError as e } from './catalogue-error.js';

/** Authentication and authorization errors every protected route can answer (the guard's). */
export const AUTH_ERRORS = {
  notAuthenticated: e('NOT_AUTHENTICATED', 401, 'Not authenticated', { summary: 'No bearer token' }),
  invalidCredentials: e('INVALID_CREDENTIALS', 401, 'Could not validate credentials', {
    summary: 'Token invalid, expired or revoked',
  }),
  notEnoughPermissions: e('NOT_ENOUGH_PERMISSIONS', 403, 'Not enough permissions', { summary: 'Role not allowed' }),
} as const;
