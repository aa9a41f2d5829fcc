import fc from 'fast-check';
import { trackerCsvRows } from '../../src/analytics/analytics-csv.js';
import { JOURNEY_COMPLETION_PERCENT } from '../../src/analytics/analytics.mapper.js';
import type { TrackerAnalyticsTuple } from '../../src/analytics/analytics.repository.js';
import { csvRow } from '../../src/common/csv/csv.js';

/** The export's row template writes exactly what the generic csvRow writes for the same cells. */
describe('trackerCsvRows', () => {
  const viaCsvRow = ([
    id,
    name,
    journey,
    deliveryName,
    days,
    hours,
    status,
    visits,
    storage,
  ]: TrackerAnalyticsTuple): string =>
    csvRow([
      name,
      id,
      status,
      `${(Object.hasOwn(JOURNEY_COMPLETION_PERCENT, status) ? JOURNEY_COMPLETION_PERCENT[status] : 0).toFixed(1)}%`,
      journey.toFixed(2),
      deliveryName,
      days.toFixed(2),
      hours.toFixed(2),
      visits,
      storage.toFixed(2),
    ]);
  const text = fc.oneof(
    fc.string(),
    fc.constantFrom('', '=SUM(A1)', '-x', '+1', '@a', '\tt', '\rr', 'a,b', 'say "hi"', 'line\nbreak', 'Zoë'),
  );
  // Any double, the SQL's rounded days, and whole hundredths up to and past the fast path's range.
  const figure = fc.oneof(
    fc.double({ noNaN: false }),
    fc.integer({ min: 0, max: 10_000_000 }).map((n) => Math.floor(n / 864 + 0.5) / 100),
    fc
      .oneof(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }))
      .map((n) => n / 100),
    fc.constantFrom(-0, 0.005, 0.015, 1e15 / 100, 1e21, 0.1 + 0.2),
  );
  const row: fc.Arbitrary<TrackerAnalyticsTuple> = fc.tuple(
    fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    text,
    figure,
    text,
    figure,
    figure,
    fc.oneof(fc.constantFrom('CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'), text),
    fc.nat(),
    figure,
  );

  it('equals csvRow of the same cells, for any text and figures', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), (rows) => {
        expect(trackerCsvRows(rows)).toBe(rows.map(viaCsvRow).join(''));
      }),
      { numRuns: 500 },
    );
  });
});
