import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import {
  AS_OF,
  buildAnalyticsFixture,
  parseCsvSections,
  poolConnectionsReleased,
  type AnalyticsFixture,
} from '../support/analytics.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { pausedHolding } from '../support/connections.js';

const TRACKER_HEADER = [
  'Tracker Name',
  'Tracker ID',
  'Current Status',
  'Journey Completion %',
  'Total Journey Duration (days)',
  'Delivery Location',
  'Delivery Location Duration (days)',
  'Delivery Location Duration (hours)',
  'Storage Locations Visited',
  'Total Storage Duration (days)',
];
const DELIVERY_HEADER = [
  'Location Name',
  'Tracker Count',
  'Average Duration (days)',
  'Min Duration (days)',
  'Max Duration (days)',
];

describe('Production-run analytics CSV', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let fx: AnalyticsFixture;
  const csvUrl = (runId = fx.runId) => `/api/v1/production-runs/${runId}/analytics/csv`;

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    fx = await buildAnalyticsFixture(t);
  });
  afterAll(() => t.close());

  const exportConnectionReleased = () => poolConnectionsReleased(t);

  it('streams every section with exact headers and the values of the JSON result', async () => {
    const before = new Date();
    const res = await t.http().get(csvUrl()).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    // Streamed: chunked transfer, no Content-Length computed up front.
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="production_run_${fx.runId}_Spring_batch_2026_\\d{8}_\\d{6}\\.csv"$`),
    );
    expect(res.text.startsWith('Production Run Analytics\r\nID,')).toBe(true);

    const sections = parseCsvSections(res.text);
    expect([...sections.keys()]).toEqual([
      'Production Run Analytics',
      'Tracker Analytics',
      'Aggregate Summary',
      'Delivery Location Performance',
    ]);

    const info = sections.get('Production Run Analytics')!;
    expect(info.map((r) => r[0])).toEqual([
      'ID',
      'Description',
      'Start Date',
      'End Date',
      'Total Trackers',
      'Generated At',
    ]);
    expect(info.slice(0, 5)).toEqual([
      ['ID', String(fx.runId)],
      ['Description', 'Spring batch 2026'],
      ['Start Date', '2026-02-03T04:05:06Z'],
      ['End Date', ''],
      ['Total Trackers', '5'],
    ]);
    const generatedAt = Date.parse(info[5][1]);
    expect(info[5][1]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(generatedAt).toBeGreaterThanOrEqual(Math.floor(before.getTime() / 1000) * 1000);
    expect(generatedAt).toBeLessThanOrEqual(Date.now());

    const { trackers: tr } = fx;
    expect(sections.get('Tracker Analytics')).toEqual([
      TRACKER_HEADER,
      [
        'T1 delivered',
        String(tr.delivered),
        'DELIVERED',
        '100.0%',
        '3.50',
        'Berlin Hub',
        '6.50',
        '156.00',
        '0',
        '0.00',
      ],
      [
        'T2 storage',
        String(tr.storedTwice),
        'IN_STORAGE',
        '66.7%',
        '10.00',
        'Amsterdam DC',
        '0.00',
        '0.00',
        '3',
        '8.00',
      ],
      ['T3 created', String(tr.createdOnly), 'CREATED', '0.0%', '5.00', '', '0.00', '0.00', '0', '0.00'],
      [
        'T4 moved on',
        String(tr.deliveredMovedOn),
        'IN_TRANSIT',
        '33.3%',
        '5.25',
        'Amsterdam DC',
        '1.75',
        '42.00',
        '1',
        '3.25',
      ],
      [
        'T5 delivered',
        String(tr.deliveredLate),
        'DELIVERED',
        '100.0%',
        '1.00',
        'Berlin Hub',
        '2.00',
        '48.00',
        '0',
        '0.00',
      ],
    ]);
    expect(sections.get('Aggregate Summary')).toEqual([
      ['Total Trackers', '5'],
      ['Completed Trackers', '2'],
      ['Completion Rate %', '40.00%'],
      ['Average Delivery Location Duration (days)', '3.42'],
    ]);
    expect(sections.get('Delivery Location Performance')).toEqual([
      DELIVERY_HEADER,
      ['Amsterdam DC', '1', '1.75', '1.75', '1.75'],
      ['Berlin Hub', '2', '4.25', '2.00', '6.50'],
    ]);

    // The CSV and the JSON describe the same figures.
    const json = await t
      .http()
      .get(`/api/v1/production-runs/${fx.runId}/analytics`)
      .query({ as_of: AS_OF })
      .set(admin.auth)
      .expect(200);
    expect(
      sections
        .get('Tracker Analytics')!
        .slice(1)
        .map((r) => Number(r[4])),
    ).toEqual(
      json.body.tracker_analytics.map((a: { total_journey_duration_days: number }) => a.total_journey_duration_days),
    );
  });

  it('separates sections by exactly one empty line, each title alone on its line (RFC 4180 CRLF)', async () => {
    const res = await t.http().get(csvUrl()).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    const lines = res.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    for (const title of ['Tracker Analytics', 'Aggregate Summary', 'Delivery Location Performance']) {
      const at = lines.indexOf(title);
      expect(lines[at - 1]).toBe('');
      expect(lines[at - 2]).not.toBe('');
    }
    expect(lines.filter((l) => l === '').length).toBe(4); // three separators + the final line end
  });

  it.each([
    [
      { include_aggregate_summary: 'false' },
      ['Production Run Analytics', 'Tracker Analytics', 'Delivery Location Performance'],
    ],
    [{ include_delivery_performance: '0' }, ['Production Run Analytics', 'Tracker Analytics', 'Aggregate Summary']],
    [
      { include_aggregate_summary: 'FALSE', include_delivery_performance: 'False' },
      ['Production Run Analytics', 'Tracker Analytics'],
    ],
    [
      { include_aggregate_summary: '1', include_delivery_performance: 'TRUE' },
      ['Production Run Analytics', 'Tracker Analytics', 'Aggregate Summary', 'Delivery Location Performance'],
    ],
  ])('includes sections per the flags %p', async (flags, titles) => {
    const res = await t
      .http()
      .get(csvUrl())
      .query({ as_of: AS_OF, ...flags })
      .set(admin.auth)
      .expect(200);
    expect([...parseCsvSections(res.text).keys()]).toEqual(titles);
  });

  it.each([
    ['ISO', '2026-02-03T04:05:06Z', '2026-12-24T18:30:00Z'],
    ['US', '02/03/2026 04:05:06', '12/24/2026 18:30:00'],
    ['EU', '03/02/2026 04:05:06', '24/12/2026 18:30:00'],
    ['eu', '03/02/2026 04:05:06', '24/12/2026 18:30:00'],
  ])('writes dates in date_format=%s', async (format, start, end) => {
    const run = await t.factories.run({
      description: 'dates',
      startDate: '2026-02-03T04:05:06Z',
      endDate: '2026-12-24T18:30:00Z',
    });
    const res = await t.http().get(csvUrl(run.id)).query({ date_format: format }).set(admin.auth).expect(200);
    const info = parseCsvSections(res.text).get('Production Run Analytics')!;
    expect(info[2]).toEqual(['Start Date', start]);
    expect(info[3]).toEqual(['End Date', end]);
    const generated = info[5][1];
    const pattern = {
      ISO: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
      US: /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/,
      EU: /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/,
    };
    expect(generated).toMatch(pattern[format.toUpperCase() as keyof typeof pattern]);
  });

  it('rejects an unknown date_format and non-boolean flags with 422', async () => {
    const bad = await t.http().get(csvUrl()).query({ date_format: 'DE' }).set(admin.auth).expect(422);
    expect(bad.body.errors).toEqual([{ field: 'date_format', message: 'must be one of ISO, US, EU' }]);
    const flag = await t.http().get(csvUrl()).query({ include_aggregate_summary: 'maybe' }).set(admin.auth).expect(422);
    expect(flag.body.errors).toEqual([
      { field: 'include_aggregate_summary', message: 'must be a boolean (true, false, 1 or 0)' },
    ]);
    const flag2 = await t
      .http()
      .get(csvUrl())
      .query({ include_delivery_performance: 'yes' })
      .set(admin.auth)
      .expect(422);
    expect(flag2.body.errors[0].field).toBe('include_delivery_performance');
  });

  it('quotes per RFC 4180 and neutralises formula-like text cells', async () => {
    const run = await t.factories.run({ description: 'Q1, "Export" / EU+US', endDate: '2026-12-24T18:30:00Z' });
    const evil = await t.factories.deliveryLocation('=HYPERLINK("http://x")');
    const names = ['=SUM(A1:A9)', '+44 123', '-2+3', '@cmd', '\tTabbed', 'Comma, "quoted"\nnewline'];
    for (const name of names) {
      await t.factories.tracker({
        runId: run.id,
        name,
        createdAt: '2026-03-01T00:00:00Z',
        history: [
          { status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' },
          { status: 'DELIVERED', timestamp: '2026-03-02T00:00:00Z', deliveryLocationId: evil.id },
        ],
      });
    }
    const res = await t.http().get(csvUrl(run.id)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="production_run_${run.id}_Q1___Export____EU_US_\\d{8}_\\d{6}\\.csv"$`),
    );
    expect(res.text).toContain('Description,"Q1, ""Export"" / EU+US"\r\n');
    expect(res.text).toContain(`"Comma, ""quoted""\nnewline",`);

    const sections = parseCsvSections(res.text);
    expect(sections.get('Production Run Analytics')![1]).toEqual(['Description', 'Q1, "Export" / EU+US']);
    const cells = sections
      .get('Tracker Analytics')!
      .slice(1)
      .map((r) => r[0]);
    expect(cells).toEqual(["'=SUM(A1:A9)", "'+44 123", "'-2+3", "'@cmd", "'\tTabbed", 'Comma, "quoted"\nnewline']);
    const rows = sections.get('Tracker Analytics')!.slice(1);
    for (const row of rows) expect(row.slice(2, 6)).toEqual(['DELIVERED', '100.0%', '1.00', `'=HYPERLINK("http://x")`]);
    expect(sections.get('Delivery Location Performance')![1]).toEqual([
      `'=HYPERLINK("http://x")`,
      '6',
      '9.00',
      '9.00',
      '9.00',
    ]);
    expect(sections.get('Aggregate Summary')![2]).toEqual(['Completion Rate %', '100.00%']);
  });

  it('exports an empty run with a header-only tracker section and zero aggregates', async () => {
    const run = await t.factories.run({ description: '' });
    const res = await t.http().get(csvUrl(run.id)).set(admin.auth).expect(200);
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`filename="production_run_${run.id}__\\d{8}_\\d{6}\\.csv"$`),
    );
    const sections = parseCsvSections(res.text);
    expect(sections.get('Tracker Analytics')).toEqual([TRACKER_HEADER]);
    expect(sections.get('Aggregate Summary')).toEqual([
      ['Total Trackers', '0'],
      ['Completed Trackers', '0'],
      ['Completion Rate %', '0.00%'],
      ['Average Delivery Location Duration (days)', '0.00'],
    ]);
    expect(sections.get('Delivery Location Performance')).toEqual([DELIVERY_HEADER]);
  });

  it('streams a run larger than one cursor batch completely and returns the connection to the pool', async () => {
    const run = await t.factories.run({ description: 'bulk' });
    await t.db.query(
      `WITH ins AS (
         INSERT INTO trackers (name, production_run_id, status, created_at, updated_at)
         SELECT 'bulk-' || g, $1, 'IN_TRANSIT', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z' FROM generate_series(1, 2500) g
         RETURNING id)
       INSERT INTO tracker_status_history (tracker_id, status, timestamp)
       SELECT id, s.status, s.ts FROM ins
       CROSS JOIN (VALUES ('CREATED', '2026-03-01T00:00:00Z'::timestamptz), ('IN_TRANSIT', '2026-03-02T00:00:00Z'::timestamptz)) s(status, ts)`,
      [run.id],
    );
    const res = await t.http().get(csvUrl(run.id)).query({ as_of: AS_OF }).set(admin.auth).expect(200);
    const rows = parseCsvSections(res.text).get('Tracker Analytics')!.slice(1);
    expect(rows).toHaveLength(2500);
    expect(new Set(rows.map((r) => r[0])).size).toBe(2500);
    expect(rows.every((r) => r[2] === 'IN_TRANSIT' && r[3] === '33.3%' && r[4] === '10.00')).toBe(true);
    // The dedicated export connection goes back to the pool (just after the last byte is sent).
    expect(await exportConnectionReleased()).toBe(true);
  });

  it('stops reading and releases its connection when the client goes away mid-stream', async () => {
    const run = await t.factories.run({ description: 'abort' });
    await t.db.query(
      `INSERT INTO trackers (name, production_run_id, status, created_at, updated_at)
       SELECT 'abort-' || g || repeat('x', 200), $1, 'CREATED', '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z' FROM generate_series(1, 30000) g`,
      [run.id],
    );
    const server = t.app.getHttpServer() as http.Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const pool = t.app.get(DatabasePool);
    let heldWhilePaused = -1;
    const firstBytes = await new Promise<string>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: csvUrl(run.id), headers: admin.auth }, (res) => {
        res.once('data', (chunk: Buffer) => {
          // Stop reading: the server fills the socket and waits for drain (backpressure).
          res.pause();
          // Meanwhile the export holds its connection, parked on the suspended cursor (any other
          // connection still finishing on a loaded machine is waited for).
          void pausedHolding(pool).then((held) => {
            heldWhilePaused = held;
            req.destroy();
            resolve(chunk.toString('utf8'));
          }, reject);
        });
      });
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    });
    expect(firstBytes.startsWith('Production Run Analytics')).toBe(true);
    expect(heldWhilePaused).toBe(1);
    // The export notices the close, closes its cursor, ends its transaction and gives the connection back.
    expect(await exportConnectionReleased()).toBe(true);
  });
});
