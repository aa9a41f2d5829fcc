import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of user management and self-service. */
export const USER_ERRORS = {
  userNotFound: e('USER_NOT_FOUND', 404, 'User not found'),
  emailTaken: e('EMAIL_TAKEN', 409, 'A user with this email already exists'),
  lastAdmin: e('LAST_ADMIN', 409, 'Cannot remove the last active admin', {
    summary: 'Deleting, deactivating or demoting the last active admin',
  }),
  currentPasswordIncorrect: e('CURRENT_PASSWORD_INCORRECT', 400, 'Current password is incorrect'),
} as const;
