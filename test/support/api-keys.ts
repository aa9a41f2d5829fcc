import type { TestApp } from './app.js';

export const API_KEYS = '/api/v1/api-keys';

/** What POST /api-keys answers (the key's text only there). */
export interface CreatedKey {
  id: number;
  user_id: number;
  prefix: string;
  scopes: string[];
  client_ids: number[] | null;
  key: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** POST /api-keys as `auth` (201 expected): a key named `name` with `body`'s fields. */
export async function createKey(
  t: TestApp,
  auth: { Authorization: string },
  body: Record<string, unknown> = {},
): Promise<CreatedKey> {
  const res = await t
    .http()
    .post(API_KEYS)
    .set(auth)
    .send({ name: 'integration', scopes: ['read'], ...body });
  if (res.status !== 201) throw new Error(`creating a key answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as CreatedKey;
}

/** The key in the X-API-Key header. */
export const xApiKey = (key: string) => ({ 'X-API-Key': key });
/** The key as a bearer credential. */
export const bearerKey = (key: string) => ({ Authorization: `Bearer ${key}` });

export const INVALID_CREDENTIALS = { detail: 'Could not validate credentials' };
export const NOT_ENOUGH_PERMISSIONS = { detail: 'Not enough permissions' };
