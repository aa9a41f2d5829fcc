import { isTooFarInFuture, parseIsoDateTime } from '../../src/common/http/iso-timestamp.js';

describe('tracker timestamps', () => {
  it.each([
    ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00', '2026-03-01T10:00:00.000Z'], // no offset means UTC
    ['2026-03-01 10:00', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T12:00:00+02:00', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T12:00:00+0200', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T12:00:00+02', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00.123456Z', '2026-03-01T10:00:00.123Z'],
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
  ])('parses %j as %j', (input, expected) => {
    expect(parseIsoDateTime(input)?.toISOString()).toBe(expected);
  });

  it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', '2026-03-01T25:00:00Z', '1700000000', ''])('rejects %j', (input) => {
    expect(parseIsoDateTime(input)).toBeNull();
  });

  it('allows up to 5 minutes in the future', () => {
    const now = Date.parse('2026-03-01T10:00:00Z');
    expect(isTooFarInFuture(new Date(now + 5 * 60_000), now)).toBe(false);
    expect(isTooFarInFuture(new Date(now + 5 * 60_000 + 1), now)).toBe(true);
    expect(isTooFarInFuture(new Date(now - 86_400_000), now)).toBe(false);
  });
});
