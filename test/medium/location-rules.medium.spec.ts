import {
  eligibleSql,
  filterReason,
  inManufacturingRegionSql,
  isEligible,
  MANUFACTURING_REGION,
} from '../../src/location-reports/location-rules.js';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/**
 * The eligibility verdict exists twice: as SQL (evaluated at insert and on rebuild) and as the
 * TypeScript predicate. PostgreSQL must reach the same verdict for every point, edges included.
 */
describe('aggregation eligibility: SQL and TypeScript agree', () => {
  let t: MediumContext;
  beforeAll(async () => {
    t = await createMediumContext({ factories: false });
  });
  afterAll(() => t.close());

  it('for points on, just inside and just outside every edge of the region, at every confidence', async () => {
    const box = MANUFACTURING_REGION;
    const around = (value: number) => [value - 1e-9, value, value + 1e-9];
    const latitudes = [-90, 0, ...around(box.minLatitude), 30, ...around(box.maxLatitude), 90];
    const longitudes = [-180, 0, ...around(box.minLongitude), 100, ...around(box.maxLongitude), 180];
    const points = latitudes.flatMap((latitude) =>
      longitudes.flatMap((longitude) => [0, 1, 2, 3, 4, 5].map((confidence) => ({ latitude, longitude, confidence }))),
    );
    const rows = await t.get(Db).rows<{ i: number; eligible: boolean; in_region: boolean }>(
      sql`SELECT p.i::int AS i, ${eligibleSql('p.lat', 'p.lon', 'p.conf')} AS eligible, ${inManufacturingRegionSql('p.lat', 'p.lon')} AS in_region
            FROM unnest(${points.map((p) => p.latitude)}::float8[], ${points.map((p) => p.longitude)}::float8[], ${points.map((p) => p.confidence)}::int[])
                 WITH ORDINALITY AS p(lat, lon, conf, i) ORDER BY p.i`,
    );
    expect(rows).toHaveLength(points.length);
    const disagreements = rows.filter((row) => {
      const point = points[row.i - 1];
      return (
        row.eligible !== isEligible(point) ||
        row.in_region !== (filterReason({ ...point, confidence: 5 }) === 'manufacturing_region')
      );
    });
    expect(disagreements).toEqual([]);
    expect(rows.some((row) => row.eligible)).toBe(true);
    expect(rows.some((row) => row.in_region)).toBe(true);
  });
});
