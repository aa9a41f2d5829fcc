import type { Role } from './roles.js';

/** The caller, as loaded fresh from the users table on every request (never from token claims). */
export interface AuthUser {
  id: number;
  email: string;
  name: string;
  roles: Role[];
  clientIds: number[];
  /** jti and expiry of the access token used, so logout can revoke it. */
  tokenId: string;
  /** The family (login) the access token descends from, revoked as a whole on refresh-token reuse; null when none. */
  tokenFamily: string | null;
  tokenExpiresAt: Date;
}

export function isAdmin(user: Pick<AuthUser, 'roles'>): boolean {
  return user.roles.includes('admin');
}
