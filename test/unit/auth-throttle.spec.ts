import {
  LoginThrottle,
  LoginThrottledException,
  MAX_FAILURES_PER_EMAIL,
  MAX_FAILURES_PER_IP,
} from '../../src/auth/login-throttle.service.js';
import { isWellFormed, type TokenClaims } from '../../src/auth/token.service.js';
import type { CacheService } from '../../src/infrastructure/cache/cache.service.js';

/** A shared counter store that can be switched off, shaped like CacheService's counter API. */
class FakeStore {
  up = true;
  readonly counters = new Map<string, number>();
  async increment(key: string, _windowSeconds: number, by = 1): Promise<{ count: number; ttlSeconds: number } | null> {
    if (!this.up) return null;
    const count = (this.counters.get(key) ?? 0) + by;
    this.counters.set(key, count);
    return { count, ttlSeconds: 900 };
  }
  async counter(key: string): Promise<{ count: number; ttlSeconds: number }> {
    if (!this.up) return { count: 0, ttlSeconds: 0 };
    return { count: this.counters.get(key) ?? 0, ttlSeconds: 900 };
  }
  async resetCounter(key: string): Promise<void> {
    if (this.up) this.counters.delete(key);
  }
}

const attempts = async (throttle: LoginThrottle, email: string, ip: string, n: number) => {
  for (let i = 0; i < n; i++) {
    await throttle.begin(email, ip);
    await throttle.failed(ip);
  }
};

describe('LoginThrottle', () => {
  let store: FakeStore;
  let throttle: LoginThrottle;
  beforeEach(() => {
    store = new FakeStore();
    throttle = new LoginThrottle(store as unknown as CacheService);
  });

  it(`allows ${MAX_FAILURES_PER_EMAIL} failed attempts per e-mail, then refuses with the seconds left`, async () => {
    await attempts(throttle, 'a@example.com', '1.1.1.1', MAX_FAILURES_PER_EMAIL);
    const refusal = await throttle.begin(' A@Example.com ', '2.2.2.2').catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(LoginThrottledException);
    expect((refusal as LoginThrottledException).retryAfterSeconds).toBe(900);
    expect((refusal as LoginThrottledException).getResponse()).toEqual({
      detail: 'Too many login attempts. Try again later.',
    });
  });

  it(`refuses an IP after ${MAX_FAILURES_PER_IP} failures whatever the e-mail`, async () => {
    for (let i = 0; i < MAX_FAILURES_PER_IP; i++) await attempts(throttle, `u${i}@example.com`, '3.3.3.3', 1);
    await expect(throttle.begin('fresh@example.com', '3.3.3.3')).rejects.toBeInstanceOf(LoginThrottledException);
    await expect(throttle.begin('fresh@example.com', '4.4.4.4')).resolves.toBeUndefined();
  });

  it('does not store the e-mail address in the key', async () => {
    await attempts(throttle, 'secret.person@example.com', '5.5.5.5', 1);
    expect([...store.counters.keys()].join(' ')).not.toContain('secret.person');
  });

  it('keeps counting in the instance while the store is down, and never throws anything else', async () => {
    await attempts(throttle, 'b@example.com', '6.6.6.6', 3);
    store.up = false;
    await attempts(throttle, 'b@example.com', '6.6.6.6', MAX_FAILURES_PER_EMAIL);
    await expect(throttle.begin('b@example.com', '6.6.6.6')).rejects.toBeInstanceOf(LoginThrottledException);
    await expect(throttle.begin('other@example.com', '7.7.7.7')).resolves.toBeUndefined();
  });

  it('resets the e-mail counter on success', async () => {
    await attempts(throttle, 'c@example.com', '8.8.8.8', MAX_FAILURES_PER_EMAIL);
    await throttle.succeeded('c@example.com');
    await expect(throttle.begin('c@example.com', '8.8.8.8')).resolves.toBeUndefined();
  });
});

describe('isWellFormed (token claims)', () => {
  const claims: TokenClaims = {
    sub: '42',
    exp: 2_000_000_000,
    iat: 1_700_000_000,
    iss: 'tracker-pipeline',
    aud: 'tracker-pipeline-api',
    jti: '0b7c4a8e-1f5d-4c3b-9a2e-6d8f7e9c1a2b',
    token_type: 'access',
  };

  it('accepts complete claims of the expected type only', () => {
    expect(isWellFormed(claims, 'access')).toBe(true);
    expect(isWellFormed(claims, 'refresh')).toBe(false);
  });

  it.each([
    ['missing exp', { exp: undefined }],
    ['string exp', { exp: '2000000000' }],
    ['missing iat', { iat: undefined }],
    ['sub 0', { sub: '0' }],
    ['sub with leading zero', { sub: '042' }],
    ['sub beyond int4', { sub: '2147483648' }],
    ['numeric sub', { sub: 42 }],
    ['jti of dashes', { jti: '-'.repeat(36) }],
    ['missing jti', { jti: undefined }],
    ['missing token_type', { token_type: undefined }],
  ])('refuses %s', (_name, override) => {
    expect(isWellFormed({ ...claims, ...override } as Partial<TokenClaims>, 'access')).toBe(false);
  });
});
