import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of clients. */
export const CLIENT_ERRORS = {
  clientNotFound: e('CLIENT_NOT_FOUND', 404, 'Client not found', {
    summary: "Missing, or not in the caller's client_list",
  }),
  clientExists: (name = 'NAME') => e('CLIENT_EXISTS', 409, `Client '${name}' already exists`),
} as const;
