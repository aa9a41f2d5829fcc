import { createHash, randomBytes } from 'node:crypto';

/**
 * A share link's token: 32 random bytes in base64url (43 characters, 256 bits). Only its SHA-256
 * is stored — with that much entropy a fast hash is as safe as a password hash (nothing to guess).
 */
const TOKEN_BYTES = 32;
const TOKEN_TEXT = /^[A-Za-z0-9_-]{43}$/;

export function newShareToken(): { token: string; hash: Buffer } {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, hash: hashShareToken(token) };
}

export function hashShareToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Whether `text` can be a token at all (anything else is answered 404 without a lookup). */
export function isShareTokenText(text: string): boolean {
  return TOKEN_TEXT.test(text);
}

export const shareLinkPath = (token: string) => `/track/${token}`;
