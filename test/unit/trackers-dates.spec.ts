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

  it.each(['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', '2026-03-01T25:00:00Z', '1700000000', ''])(
    'rejects %j',
    (input) => {
      expect(parseIsoDateTime(input)).toBeNull();
    },
  );

  it.each([
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['1970-01-01T01:00:00+01:00', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('accepts the edge of the year range %j', (input, expected) => {
    expect(parseIsoDateTime(input)?.toISOString()).toBe(expected);
  });

  it.each([
    '1969-12-31T23:59:59Z',
    '1969-12-31T23:00:00-01:00',
    '0099-06-01',
    '1970-01-01T00:30:00+01:00',
    '9999-12-31T23:00:00-05:00',
    '10000-01-01',
    ' 2026-03-01',
    '2026-03-01 ',
  ])('rejects %j (year as written or instant in UTC outside 1970..9999, or blanks around it)', (input) => {
    expect(parseIsoDateTime(input)).toBeNull();
  });

  it('allows up to 5 minutes in the future', () => {
    const now = Date.parse('2026-03-01T10:00:00Z');
    expect(isTooFarInFuture(new Date(now + 5 * 60_000), now)).toBe(false);
    expect(isTooFarInFuture(new Date(now + 5 * 60_000 + 1), now)).toBe(true);
    expect(isTooFarInFuture(new Date(now - 86_400_000), now)).toBe(false);
  });
});
