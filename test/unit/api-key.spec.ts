import type { Request } from 'express';
import { hashSecret, newKeyText, parseKeyText, secretMatches } from '../../src/api-keys/api-key-text.js';
import { defaultKeyRule, keyAllows, presentedApiKey } from '../../src/common/auth/api-key.js';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import type { AuthUser } from '../../src/common/auth/auth-user.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as Request;

describe('API key text', () => {
  it('is tps_<8 × [a-z0-9]>_<43 × [A-Za-z0-9]>, a fresh one each time, and parses back', () => {
    const keys = Array.from({ length: 50 }, () => newKeyText());
    for (const key of keys) {
      expect(key.text).toMatch(/^tps_[a-z0-9]{8}_[A-Za-z0-9]{43}$/);
      const parsed = parseKeyText(key.text)!;
      expect(parsed.prefix).toBe(key.prefix);
      expect(secretMatches(parsed.secret, key.secretHash)).toBe(true);
      expect(secretMatches(`${parsed.secret.slice(1)}x`, key.secretHash)).toBe(false);
    }
    expect(new Set(keys.map((k) => k.text)).size).toBe(keys.length);
    expect(hashSecret('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('refuses anything not of that form', () => {
    for (const text of [
      '',
      'tps_',
      'tps_abcdefgh_short',
      'tps_ABCDEFGH_' + 'a'.repeat(40),
      'xps_abcdefgh_' + 'a'.repeat(40),
      'tps_abcdefgh_' + 'a'.repeat(40) + '!',
    ])
      expect({ text, parsed: parseKeyText(text) }).toEqual({ text, parsed: null });
  });
});

describe('how a request presents a key', () => {
  it('takes X-API-Key, else a bearer credential starting tps_; a JWT is not a key', () => {
    expect(presentedApiKey(request({ 'x-api-key': 'tps_a' }))).toBe('tps_a');
    expect(presentedApiKey(request({ 'x-api-key': 'tps_a', authorization: 'Bearer eyJx' }))).toBe('tps_a');
    expect(presentedApiKey(request({ authorization: 'Bearer tps_b' }))).toBe('tps_b');
    expect(presentedApiKey(request({ authorization: 'Bearer eyJhbGciOi.x.y' }))).toBeUndefined();
    expect(presentedApiKey(request({}))).toBeUndefined();
    expect(presentedApiKey(request({ 'x-api-key': '' }))).toBe('');
  });

  it('needs read for GET, write for other methods, webhooks under /webhooks whatever the method', () => {
    expect(defaultKeyRule('GET', '/api/v1/trackers')).toBe('read');
    expect(defaultKeyRule('HEAD', '/api/v1/trackers')).toBe('read');
    expect(defaultKeyRule('POST', '/api/v1/trackers')).toBe('write');
    expect(defaultKeyRule('GET', '/api/v1/webhooks')).toBe('webhooks');
    expect(defaultKeyRule('DELETE', '/api/v1/webhooks/:id')).toBe('webhooks');
    expect(defaultKeyRule('GET', '/api/v1/webhooksx')).toBe('read');
    const grant = { id: 1, scopes: ['read', 'ingest'] as const, clientIds: null };
    expect([keyAllows('read', grant), keyAllows('write', grant), keyAllows('none', grant)]).toEqual([
      true,
      false,
      false,
    ]);
  });
});

describe('AccessScope of a request with an API key', () => {
  const user = (roles: AuthUser['roles'], clientIds: number[], keyClients: number[] | null): AuthUser => ({
    id: 1,
    email: 'a@b.c',
    name: 'A',
    roles,
    clientIds,
    tokenId: 'api-key:1',
    tokenFamily: null,
    tokenExpiresAt: new Date(),
    apiKey: { id: 1, prefix: 'abcd1234', scopes: ['read'], clientIds: keyClients },
  });

  it("intersects the owner's clients with the key's; an admin owner sees exactly the key's", () => {
    expect(AccessScope.of(user(['user'], [1, 2, 3], [3, 2, 9])).cacheKey).toBe('c:2,3');
    expect(AccessScope.of(user(['user'], [1, 2], null)).cacheKey).toBe('c:1,2');
    expect(AccessScope.of(user(['admin'], [], [5])).cacheKey).toBe('c:5');
    expect(AccessScope.of(user(['admin'], [], null)).all).toBe(true);
    expect(AccessScope.ingest(user(['ingest'], [], [4])).cacheKey).toBe('c:4');
    expect(AccessScope.ingest(user(['ingest'], [], null)).all).toBe(true);
  });
});
