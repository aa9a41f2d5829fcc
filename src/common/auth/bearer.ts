/**
 * What an `Authorization` header carries, read the same way by the guard, the JWT strategy, logout
 * and /metrics:
 * - `none`: no header, another scheme (`Basic …`), or `Bearer` without a credential — no token was
 *   presented (401 "Not authenticated").
 * - `token`: exactly `Bearer <credential>` — the scheme in any letter case (RFC 7235), one or more
 *   spaces, then one credential of visible ASCII characters and nothing after it.
 * - `malformed`: the Bearer scheme with anything else (`Bearer a b`, a tab, control characters) —
 *   a token that cannot be valid (401 "Could not validate credentials"; logout revokes nothing).
 */
type BearerCredential = { kind: 'none' } | { kind: 'malformed' } | { kind: 'token'; token: string };

const BEARER_SCHEME = /^bearer(?=\s|$)/i;
const CREDENTIAL = /^ +([\x21-\x7e]+)$/;

export function parseBearer(header: string | undefined): BearerCredential {
  if (header === undefined || !BEARER_SCHEME.test(header)) return { kind: 'none' };
  const rest = header.slice('bearer'.length);
  if (rest.trim() === '') return { kind: 'none' };
  const match = CREDENTIAL.exec(rest);
  return match ? { kind: 'token', token: match[1] } : { kind: 'malformed' };
}

/** The bearer token when the header is exactly `Bearer <credential>`, else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const credential = parseBearer(header);
  return credential.kind === 'token' ? credential.token : undefined;
}
