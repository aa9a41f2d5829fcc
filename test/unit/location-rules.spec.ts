import {
  dayBucket,
  DAY_MS,
  eligibleSql,
  filterReason,
  hourBucket,
  HOUR_MS,
  inManufacturingRegion,
  isEligible,
  MANUFACTURING_REGION,
  MIN_AGGREGATED_CONFIDENCE,
} from '../../src/location-reports/location-rules.js';

// Box edges and the low-confidence precedence are covered in locations-report-batch.spec.ts.
describe('aggregation eligibility (location rules)', () => {
  const outside = { latitude: 52.52, longitude: 13.405 };
  const inside = { latitude: 30, longitude: 100 };

  it('confidence 2 is the first aggregated level; 0 and 1 are stored but filtered', () => {
    expect(MIN_AGGREGATED_CONFIDENCE).toBe(2);
    expect([0, 1, 2, 3, 4].map((confidence) => filterReason({ ...outside, confidence }))).toEqual([
      'low_confidence',
      'low_confidence',
      null,
      null,
      null,
    ]);
  });

  it('the region box is the published one, and reports just outside each edge are eligible', () => {
    expect(MANUFACTURING_REGION).toEqual({
      minLongitude: 73.6,
      maxLongitude: 134.8,
      minLatitude: 18.2,
      maxLatitude: 53.5,
    });
    const box = MANUFACTURING_REGION;
    const justOutside = [
      { latitude: 30, longitude: box.minLongitude - 1e-6 },
      { latitude: 30, longitude: box.maxLongitude + 1e-6 },
      { latitude: box.minLatitude - 1e-6, longitude: 100 },
      { latitude: box.maxLatitude + 1e-6, longitude: 100 },
    ];
    for (const point of justOutside) {
      expect(inManufacturingRegion(point.latitude, point.longitude)).toBe(false);
      expect(filterReason({ ...point, confidence: 2 })).toBeNull();
    }
    expect(filterReason({ ...inside, confidence: 4 })).toBe('manufacturing_region');
  });

  it('latitude and longitude are not interchangeable', () => {
    // (lat 100, lon 30) is not a point of the box even though (lat 30, lon 100) is.
    expect(inManufacturingRegion(30, 100)).toBe(true);
    expect(inManufacturingRegion(100, 30)).toBe(false);
  });

  it('isEligible is exactly "no filter reason"', () => {
    for (const confidence of [0, 1, 2, 3]) {
      for (const point of [inside, outside]) {
        expect(isEligible({ ...point, confidence })).toBe(filterReason({ ...point, confidence }) === null);
      }
    }
  });

  it('the SQL verdict reads the same constants', () => {
    const text = eligibleSql('lat', 'lon', 'conf').sql;
    expect(text).toContain(`conf >= ${MIN_AGGREGATED_CONFIDENCE}`);
    for (const bound of Object.values(MANUFACTURING_REGION)) expect(text).toContain(`${bound}::float8`);
  });

  it('hour and day buckets are UTC starts', () => {
    const at = Date.UTC(2026, 4, 1, 10, 59, 59, 999);
    expect(hourBucket(at)).toBe(Date.UTC(2026, 4, 1, 10));
    expect(hourBucket(Date.UTC(2026, 4, 1, 11))).toBe(Date.UTC(2026, 4, 1, 11));
    expect(dayBucket(at)).toBe(Date.UTC(2026, 4, 1));
    expect(dayBucket(Date.UTC(2026, 4, 1) - 1)).toBe(Date.UTC(2026, 4, 1) - DAY_MS);
    expect(hourBucket(at) % HOUR_MS).toBe(0);
  });
});
