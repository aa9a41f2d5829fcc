import Papa from 'papaparse';
import { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import type { TestApp } from './app.js';

/**
 * A production run with back-dated histories whose analytics are computed by hand in
 * test/e2e/analytics.e2e.spec.ts (as_of = AS_OF unless a test says otherwise).
 */
export const AS_OF = '2026-03-11T00:00:00.000Z';

export interface AnalyticsFixture {
  clientId: number;
  runId: number;
  delivery: { berlin: number; amsterdam: number };
  storage: { north: number; south: number };
  trackers: {
    delivered: number;
    storedTwice: number;
    createdOnly: number;
    deliveredMovedOn: number;
    deliveredLate: number;
  };
}

export async function buildAnalyticsFixture(t: TestApp): Promise<AnalyticsFixture> {
  const f = t.factories;
  const client = await f.client();
  const run = await f.run({
    clientId: client.id,
    description: 'Spring batch 2026',
    startDate: '2026-02-03T04:05:06Z',
    endDate: null,
  });
  const berlin = await f.deliveryLocation('Berlin Hub');
  const amsterdam = await f.deliveryLocation('Amsterdam DC');
  const north = await f.storageLocation('Warehouse North');
  const south = await f.storageLocation('Warehouse South');
  const runId = run.id;

  // Delivered on 03-04 12:00 and still there at as_of; an entry after as_of must be ignored.
  const delivered = await f.tracker({
    runId,
    name: 'T1 delivered',
    deliveryLocationId: berlin.id,
    createdAt: '2026-03-01T00:00:00Z',
    history: [
      { status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' },
      { status: 'IN_TRANSIT', timestamp: '2026-03-02T00:00:00Z' },
      { status: 'DELIVERED', timestamp: '2026-03-04T12:00:00Z', deliveryLocationId: berlin.id },
      { status: 'IN_TRANSIT', timestamp: '2026-03-15T00:00:00Z' },
    ],
  });
  // North 03-02..03-04, South 03-05..03-07, North again from 03-07 (open at as_of).
  const storedTwice = await f.tracker({
    runId,
    name: 'T2 storage',
    deliveryLocationId: amsterdam.id,
    createdAt: '2026-03-01T00:00:00Z',
    history: [
      { status: 'CREATED', timestamp: '2026-03-01T00:00:00Z' },
      { status: 'IN_STORAGE', timestamp: '2026-03-02T00:00:00Z', storageLocationId: north.id },
      { status: 'IN_TRANSIT', timestamp: '2026-03-04T00:00:00Z' },
      { status: 'IN_STORAGE', timestamp: '2026-03-05T00:00:00Z', storageLocationId: south.id },
      { status: 'IN_STORAGE', timestamp: '2026-03-07T00:00:00Z', storageLocationId: north.id },
    ],
  });
  // No status entries at all: CREATED since created_at, no destination.
  const createdOnly = await f.tracker({ runId, name: 'T3 created', createdAt: '2026-03-06T00:00:00Z', history: [] });
  // Stored, delivered to Amsterdam on 02-25 06:00, moved on 02-27: delivered but not completed.
  const deliveredMovedOn = await f.tracker({
    runId,
    name: 'T4 moved on',
    createdAt: '2026-02-20T00:00:00Z',
    history: [
      { status: 'CREATED', timestamp: '2026-02-20T00:00:00Z' },
      { status: 'IN_TRANSIT', timestamp: '2026-02-21T00:00:00Z' },
      { status: 'IN_STORAGE', timestamp: '2026-02-22T00:00:00Z', storageLocationId: north.id },
      { status: 'DELIVERED', timestamp: '2026-02-25T06:00:00Z', deliveryLocationId: amsterdam.id },
      { status: 'IN_TRANSIT', timestamp: '2026-02-27T00:00:00Z' },
    ],
  });
  const deliveredLate = await f.tracker({
    runId,
    name: 'T5 delivered',
    createdAt: '2026-03-08T00:00:00Z',
    history: [
      { status: 'CREATED', timestamp: '2026-03-08T00:00:00Z' },
      { status: 'DELIVERED', timestamp: '2026-03-09T00:00:00Z', deliveryLocationId: berlin.id },
    ],
  });
  return {
    clientId: client.id,
    runId,
    delivery: { berlin: berlin.id, amsterdam: amsterdam.id },
    storage: { north: north.id, south: south.id },
    trackers: {
      delivered: delivered.id,
      storedTwice: storedTwice.id,
      createdOnly: createdOnly.id,
      deliveredMovedOn: deliveredMovedOn.id,
      deliveredLate: deliveredLate.id,
    },
  };
}

/** Splits an analytics CSV into its sections (title → rows), parsing each with papaparse. */
export function parseCsvSections(text: string): Map<string, string[][]> {
  const parsed = Papa.parse<string[]>(text, { delimiter: ',', newline: '\r\n', skipEmptyLines: false });
  if (parsed.errors.length) throw new Error(`CSV does not parse: ${JSON.stringify(parsed.errors)}`);
  const rows = parsed.data;
  if (rows.length && rows.at(-1)?.length === 1 && rows.at(-1)?.[0] === '') rows.pop(); // trailing line end
  const sections = new Map<string, string[][]>();
  let current: string[][] | null = null;
  let expectTitle = true;
  for (const row of rows) {
    if (row.length === 1 && row[0] === '') {
      expectTitle = true;
      continue;
    }
    if (expectTitle) {
      if (row.length !== 1) throw new Error(`section title expected alone on its line, got ${JSON.stringify(row)}`);
      current = [];
      sections.set(row[0], current);
      expectTitle = false;
      continue;
    }
    current?.push(row);
  }
  return sections;
}

/** Waits (≤ 5 s) until no connection of the app's pool is checked out (a streamed answer gave its own back). */
export async function poolConnectionsReleased(t: TestApp): Promise<boolean> {
  const pool = t.app.get(DatabasePool);
  const deadline = Date.now() + 5000;
  while (pool.stats().checkedOut > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return pool.stats().checkedOut === 0;
}
