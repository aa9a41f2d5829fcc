/** Every route lives under this prefix, except `/health/db-pool` and `/metrics`. */
export const API_PREFIX = 'api/v1';
