import type { Role } from './roles.js';

/** What an API key may do, beside its owner's role and client_list. */
export type ApiKeyScope = 'read' | 'write' | 'ingest' | 'webhooks';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'write', 'ingest', 'webhooks'];

/** The API key a request authenticated with: its id, scopes and optional client narrowing. */
export interface ApiKeyGrant {
  id: number;
  /** The key's public prefix (how its state is looked up). */
  prefix: string;
  scopes: readonly ApiKeyScope[];
  /** The clients the key is narrowed to (intersected with the owner's visibility); null: not narrowed. */
  clientIds: readonly number[] | null;
}

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
  /** Set when the request authenticated with an API key instead of a JWT. */
  apiKey?: ApiKeyGrant;
}

export function isAdmin(user: Pick<AuthUser, 'roles'>): boolean {
  return user.roles.includes('admin');
}
