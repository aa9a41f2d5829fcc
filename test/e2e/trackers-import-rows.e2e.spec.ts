import type { TestApp } from '../support/app.js';
import { countRows, createTrackerWorld, TRACKERS, uploadCsv, type TrackerWorld } from '../support/trackers.js';

/** Every physical line of an imported file is a row, and every row obeys the rules of POST /trackers. */
describe('POST /trackers/import-csv: rows and their limits', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld({ env: { NODE_ENV: 'production' } })));
  afterAll(() => t.close());

  const stored = (runId: number) =>
    t.db.query(`SELECT name, notes FROM trackers WHERE production_run_id = $1 ORDER BY id`, [runId]) as Promise<
      { name: string; notes: string | null }[]
    >;

  it.each([
    ['\\r\\n header, \\n rows', 'name,notes\r\nA1,n1\nB1,n2\nC1,n3\r\n'],
    ['\\n header, \\r\\n rows', 'name,notes\nA1,n1\r\nB1,n2\r\nC1,n3\n'],
    ['lone \\r everywhere', 'name,notes\rA1,n1\rB1,n2\rC1,n3\r'],
    ['all three mixed, no final break', 'name,notes\rA1,n1\r\nB1,n2\nC1,n3'],
    ['blank lines of each kind between rows', 'name,notes\r\n\r\nA1,n1\n\nB1,n2\r\rC1,n3\r\n'],
  ])('%s: every line is a row', async (_label, csv) => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect([res.status, res.body]).toEqual([201, { imported: 3, skipped: 0, duplicates: [], errors: [] }]);
    expect(await stored(run.id)).toEqual([
      { name: 'A1', notes: 'n1' },
      { name: 'B1', notes: 'n2' },
      { name: 'C1', notes: 'n3' },
    ]);
  });

  it('quoted cells keep their line breaks as data; BOM and `;` still work; errors name the physical line', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const csv = '\uFEFFname;notes\r\n"Q1";"one\rtwo"\n"Q2";"three\r\nfour\nfive"\rQ3;"a;b ""c"""\r\n';
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect([res.status, res.body.imported]).toEqual([201, 3]);
    expect(await stored(run.id)).toEqual([
      { name: 'Q1', notes: 'one\rtwo' },
      { name: 'Q2', notes: 'three\r\nfour\nfive' },
      { name: 'Q3', notes: 'a;b "c"' },
    ]);

    // Lines: 1 header, 2-3 a quoted cell over \r, 4 LOST (bad), 5 fine, 6 an unclosed quote.
    const bad = await uploadCsv(
      t,
      w.userA.auth,
      'name,status,notes\nA,,"x\ry"\rz,LOST,\r\nok,,\n"open,\n',
      `production_run_id=${run.id}`,
    );
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      detail: 'Import failed: 2 errors',
      imported: 0,
      errors: [
        { row: 4, field: 'status', message: 'must be one of CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED (got "LOST")' },
        { row: 6, field: 'row', message: 'malformed CSV: quoted field starting on line 6 is not closed' },
      ],
    });
    expect(await stored(run.id)).toHaveLength(3);
  });

  it('cells obey the text rule of JSON bodies: NUL and control characters name their row and field', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const csv = 'name,notes\nok,"tab\tand\nbreak"\nNUL\u0000,n\nBELL,a\u0007b\nTAB\tNAME,n\n';
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect([res.status, res.body]).toEqual([
      422,
      {
        detail: 'Import failed: 3 errors',
        imported: 0,
        errors: [
          { row: 4, field: 'name', message: 'must not contain control characters' },
          { row: 5, field: 'notes', message: 'must not contain control characters other than tab and line breaks' },
          { row: 6, field: 'name', message: 'must not contain control characters' },
        ],
      },
    ]);
    expect(await stored(run.id)).toEqual([]);
  });

  it('a row the API would refuse is refused by the import too, with the same message', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const longNotes = 'x'.repeat(10_001);
    const api = await t
      .http()
      .post(TRACKERS)
      .set(w.userA.auth)
      .send({ name: 'api', production_run_id: run.id, notes: longNotes });
    expect(api.status).toBe(422);
    const apiError = api.body.errors.find((e: { field: string }) => e.field === 'notes');
    expect(apiError).toEqual({ field: 'notes', message: expect.stringContaining('10000') });

    const before = await countRows(t.db, 'trackers');
    const csv = `name,notes\nfine,${'y'.repeat(10_000)}\ntoo-long,${longNotes}\n"${'n'.repeat(256)}",x\n`;
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: 'Import failed: 2 errors',
      imported: 0,
      errors: [
        { row: 3, ...apiError },
        { row: 4, field: 'name', message: 'must be at most 255 characters' },
      ],
    });
    expect(await countRows(t.db, 'trackers')).toBe(before);
  });

  it('a file of maximal rows is refused as a whole: no tracker with oversized notes can be stored', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const lines = ['name,notes'];
    for (let i = 0; i < 1500; i++) lines.push(`big-${i},${'z'.repeat(i === 1499 ? 10_001 : 10_000)}`);
    const res = await uploadCsv(t, w.userA.auth, lines.join('\n'), `production_run_id=${run.id}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ row: 1501, field: 'notes', message: expect.stringContaining('10000') }]);
    const [{ longest }] = await t.db.query(`SELECT coalesce(max(length(notes)), 0)::int AS longest FROM trackers`);
    expect(longest).toBeLessThanOrEqual(10_000);

    // Without the bad row the file imports, and a list page is bounded by limit × the largest row:
    // name ≤ 255 and notes ≤ 10 000 characters of at most 3 UTF-8 bytes each, plus fixed fields.
    const good = lines
      .slice(0, 1000)
      .join('\n')
      .replace(/z{10000}/g, 'ü'.repeat(10_000));
    const ok = await uploadCsv(t, w.userA.auth, good, `production_run_id=${run.id}`);
    expect([ok.status, ok.body.imported]).toEqual([201, 999]);
    const page = await t.http().get(`${TRACKERS}?production_run_id=${run.id}&limit=1000`).set(w.userA.auth).expect(200);
    expect(page.body.items).toHaveLength(999);
    const MAX_ROW_BYTES = 3 * (255 + 10_000) + 1024;
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(1000 * MAX_ROW_BYTES);
  });
});
