import { bearerToken, parseBearer } from '../../src/common/auth/bearer.js';

describe('parseBearer', () => {
  it('reads exactly `Bearer <credential>`, the scheme in any case', () => {
    expect(parseBearer('Bearer abc.def-_~+/=')).toEqual({ kind: 'token', token: 'abc.def-_~+/=' });
    expect(parseBearer('bEaReR abc')).toEqual({ kind: 'token', token: 'abc' });
    expect(parseBearer('Bearer   abc')).toEqual({ kind: 'token', token: 'abc' });
    expect(bearerToken('Bearer abc')).toBe('abc');
  });

  it('sees no token without the Bearer scheme or without a credential', () => {
    for (const header of [undefined, '', 'Basic abc', 'Bearerabc', 'Bearer,abc', 'Token abc', 'Bearer', 'Bearer   ']) {
      expect({ header, parsed: parseBearer(header) }).toEqual({ header, parsed: { kind: 'none' } });
      expect(bearerToken(header)).toBeUndefined();
    }
  });

  it('calls anything else after the scheme malformed', () => {
    for (const header of [
      'Bearer abc junk',
      'Bearer\tabc',
      'Bearer abc\t',
      'Bearer abc ',
      'Bearer ab\u00e9',
      'Bearer a\u0000b',
      ' Bearer abc',
    ]) {
      const parsed = parseBearer(header);
      expect({ header, parsed }).toEqual({
        header,
        parsed: header.startsWith(' ') ? { kind: 'none' } : { kind: 'malformed' },
      });
      expect(bearerToken(header)).toBeUndefined();
    }
  });
});
