import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of login and refresh-token rotation. */
export const AUTH_LOGIN_ERRORS = {
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
} as const;
