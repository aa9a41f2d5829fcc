import { catalogueError as e } from './catalogue-error.js';

/** Authentication, authorization and account errors. */
export const AUTH_ERRORS = {
  notAuthenticated: e('NOT_AUTHENTICATED', 401, 'Not authenticated', { summary: 'No bearer token' }),
  invalidCredentials: e('INVALID_CREDENTIALS', 401, 'Could not validate credentials', {
    summary: 'Token invalid, expired or revoked',
  }),
  notEnoughPermissions: e('NOT_ENOUGH_PERMISSIONS', 403, 'Not enough permissions', { summary: 'Role not allowed' }),
  incorrectLogin: e('INCORRECT_LOGIN', 401, 'Incorrect email or password', {
    summary: 'Unknown e-mail, wrong password or inactive user',
  }),
  invalidRefreshToken: e('INVALID_REFRESH_TOKEN', 401, 'Invalid refresh token', {
    summary: 'Bad, expired, revoked or already rotated token, or inactive user',
  }),
  refreshTokenMissing: e('REFRESH_TOKEN_MISSING', 401, 'Refresh token missing'),
  tooManyLoginAttempts: e('TOO_MANY_LOGIN_ATTEMPTS', 429, 'Too many login attempts. Try again later.', {
    summary:
      'More than 5 failed attempts for the e-mail or 20 from the IP within 15 minutes (sent with Retry-After, in seconds)',
  }),
  userNotFound: e('USER_NOT_FOUND', 404, 'User not found'),
  emailTaken: e('EMAIL_TAKEN', 409, 'A user with this email already exists'),
  lastAdmin: e('LAST_ADMIN', 409, 'Cannot remove the last active admin', {
    summary: 'Deleting, deactivating or demoting the last active admin',
  }),
  currentPasswordIncorrect: e('CURRENT_PASSWORD_INCORRECT', 400, 'Current password is incorrect'),
} as const;
