import { issuedAfterEpoch, type TokenClaims } from '../../src/auth/token.service.js';
import { preciseNowMicros } from '../../src/common/time/precise-clock.js';

const claims = (iat: number, iat_us?: number): TokenClaims => ({
  sub: '1',
  exp: iat + 60,
  iat,
  iss: 'i',
  aud: 'a',
  jti: '0b7c4a8e-1f5d-4c3b-9a2e-6d8f7e9c1a2b',
  token_type: 'access',
  ...(iat_us === undefined ? {} : { iat_us }),
});

describe('token epoch', () => {
  it('issue times strictly increase and follow the wall clock', () => {
    const before = Date.now();
    const times = Array.from({ length: 1000 }, () => preciseNowMicros());
    const after = Date.now();
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]);
    // Within the wall-clock window of the calls (plus the one-microsecond steps of equal milliseconds).
    expect(times[0]).toBeGreaterThanOrEqual(before * 1000);
    expect(times[times.length - 1]).toBeLessThanOrEqual(after * 1000 + times.length);
  });

  it('compares to the microsecond, and by whole seconds (rounded down) without iat_us', () => {
    const epoch = 1_700_000_000_500_000; // half a second into 1 700 000 000
    expect(issuedAfterEpoch(claims(1_700_000_000, epoch), null)).toBe(true);
    expect(issuedAfterEpoch(claims(1_700_000_000, epoch), epoch)).toBe(false);
    expect(issuedAfterEpoch(claims(1_700_000_000, epoch + 1), epoch)).toBe(true);
    expect(issuedAfterEpoch(claims(1_700_000_000), epoch)).toBe(false);
    expect(issuedAfterEpoch(claims(1_700_000_001), epoch)).toBe(true);
  });
});
