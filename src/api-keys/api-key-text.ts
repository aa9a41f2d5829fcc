import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { API_KEY_TEXT_PREFIX } from '../common/auth/api-key.js';

/**
 * The text of an API key: `tps_<prefix>_<secret>`. The prefix (8 × [a-z0-9]) is public — it finds
 * the key and is shown in listings; the secret (43 × [A-Za-z0-9], about 256 bits) is shown once.
 * Only SHA-256 of the secret is stored: with that much entropy a fast hash is as safe as a password
 * hash (nothing to guess), and a request with a key costs a microsecond, not an argon2 run.
 */
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PREFIX_LENGTH = 8;
const SECRET_LENGTH = 43;
/** What a key presented by a client must look like (a secret of 32 to 128 characters is read; ours are 43). */
const KEY_TEXT = /^tps_([a-z0-9]{8})_([A-Za-z0-9]{32,128})$/;

export interface NewKeyText {
  text: string;
  prefix: string;
  secretHash: Buffer;
}

function randomText(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function newKeyText(): NewKeyText {
  const prefix = randomText(PREFIX_ALPHABET, PREFIX_LENGTH);
  const secret = randomText(SECRET_ALPHABET, SECRET_LENGTH);
  return { text: `${API_KEY_TEXT_PREFIX}${prefix}_${secret}`, prefix, secretHash: hashSecret(secret) };
}

/** Prefix and secret of a well-formed key text; null for anything else. */
export function parseKeyText(text: string): { prefix: string; secret: string } | null {
  const match = KEY_TEXT.exec(text);
  return match ? { prefix: match[1], secret: match[2] } : null;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Whether the secret hashes to `hash`, compared in constant time. */
export function secretMatches(secret: string, hash: Buffer): boolean {
  const given = hashSecret(secret);
  return given.length === hash.length && timingSafeEqual(given, hash);
}
