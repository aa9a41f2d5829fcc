/** The roles a user can hold. */
export type Role = 'admin' | 'user' | 'ingest';
export const ROLES: readonly Role[] = ['admin', 'user', 'ingest'];
