import { toPage } from '../../src/common/http/pagination.js';
import { isoNoSuffix, isoUtc, isoWithOffset } from '../../src/common/http/timestamps.js';

describe('toPage', () => {
  it.each([
    // skip, limit, total → page, pages
    [0, 50, 0, 1, 0],
    [0, 50, 1, 1, 1],
    [0, 50, 50, 1, 1],
    [0, 50, 51, 1, 2],
    [50, 50, 51, 2, 2],
    [49, 50, 120, 1, 3],
    [75, 25, 100, 4, 4],
    [1000, 10, 5, 101, 1],
  ])('skip=%i limit=%i total=%i → page %i of %i', (skip, limit, total, page, pages) => {
    expect(toPage(['x'], total, { skip, limit })).toEqual({ items: ['x'], total, page, size: limit, pages });
  });
});

describe('timestamp formats', () => {
  const at = new Date('2026-11-21T10:04:05.123Z');
  it('formats UTC with Z, without suffix, and with a numeric offset', () => {
    expect(isoUtc(at)).toBe('2026-11-21T10:04:05.123Z');
    expect(isoUtc(null)).toBeNull();
    expect(isoNoSuffix(at)).toBe('2026-11-21T10:04:05.123');
    expect(isoWithOffset(at)).toBe('2026-11-21T10:04:05.123+00:00');
  });
});
