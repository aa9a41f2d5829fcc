import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of brands. */
export const BRAND_ERRORS = {
  brandNotFound: e('BRAND_NOT_FOUND', 404, 'Brand not found', {
    summary: "Missing, or of a client not in the caller's client_list",
  }),
  brandExists: (name = 'NAME', clientId: number | string = 'ID') =>
    e('BRAND_EXISTS', 409, `Brand '${name}' already exists for client ${clientId}`),
} as const;
