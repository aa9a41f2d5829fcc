import type { TestApp } from '../support/app.js';
import { countRows, createTrackerWorld, TRACKERS, uploadCsv, type TrackerWorld } from '../support/trackers.js';

describe('POST /trackers/import-csv', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  const trackersOf = (runId: number) =>
    t.db.query(
      `SELECT t.name, t.status, t.storage_location_id, t.delivery_location_id, t.notes,
              (SELECT array_agg(h.status) FROM tracker_status_history h WHERE h.tracker_id = t.id) AS history
         FROM trackers t WHERE t.production_run_id = $1 ORDER BY t.id`,
      [runId],
    );
  const totals = async () => [await countRows(t.db, 'trackers'), await countRows(t.db, 'tracker_status_history')];

  it('imports with header aliases, a BOM, semicolons, trimmed values and case-insensitive statuses', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const csv =
      '\uFEFF Tracker Name ;RUN-ID;Current_Status;Delivery Location;Comment;Storage-Location;Colour\r\n' +
      `  TRK-A ;${run.id}; in transit ;;  first ;;red\r\n` +
      `TRK-B;${run.id};DELIVERED;${w.delivery.id};;;\r\n` +
      `TRK-C;${run.id};In-Storage;;;${w.storage.id};\r\n` +
      `TRK-D;${run.id};;;;;\r\n`;
    const res = await uploadCsv(t, w.userA.auth, csv);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 4, skipped: 0, duplicates: [], errors: [] });
    expect(await trackersOf(run.id)).toEqual([
      {
        name: 'TRK-A',
        status: 'IN_TRANSIT',
        storage_location_id: null,
        delivery_location_id: null,
        notes: 'first',
        history: ['IN_TRANSIT'],
      },
      {
        name: 'TRK-B',
        status: 'DELIVERED',
        storage_location_id: null,
        delivery_location_id: w.delivery.id,
        notes: null,
        history: ['DELIVERED'],
      },
      {
        name: 'TRK-C',
        status: 'IN_STORAGE',
        storage_location_id: w.storage.id,
        delivery_location_id: null,
        notes: null,
        history: ['IN_STORAGE'],
      },
      {
        name: 'TRK-D',
        status: 'CREATED',
        storage_location_id: null,
        delivery_location_id: null,
        notes: null,
        history: ['CREATED'],
      },
    ]);
  });

  it.each([['name,production_run_id', 'tracker_name,production_run', 'TRACKER,Run Id', 'Name,ProductionRunID']])(
    'accepts every spelling of the name and run columns',
    async (...headers) => {
      const run = await t.factories.run({ clientId: w.clientA.id });
      for (const [i, header] of headers.entries()) {
        const res = await uploadCsv(t, w.admin.auth, `${header}\nspelling-${i},${run.id}\n`);
        expect([header, res.status]).toEqual([header, 201]);
      }
      const statusAliases = ['status', 'current_status', 'state'];
      const destinationAliases = ['delivery_location_id', 'delivery_location'];
      const notesAliases = ['notes', 'note', 'comment'];
      for (const [i, status] of statusAliases.entries()) {
        const header = `name,${status},${destinationAliases[i % 2]},${notesAliases[i]}`;
        const res = await uploadCsv(
          t,
          w.admin.auth,
          `${header}\nalias-${i},delivered,${w.delivery2.id},n${i}\n`,
          `production_run_id=${run.id}`,
        );
        expect([header, res.status]).toEqual([header, 201]);
      }
      const rows = await trackersOf(run.id);
      expect(rows.filter((r: { name: string }) => r.name.startsWith('alias-'))).toEqual(
        [0, 1, 2].map((i) => ({
          name: `alias-${i}`,
          status: 'DELIVERED',
          storage_location_id: null,
          delivery_location_id: w.delivery2.id,
          notes: `n${i}`,
          history: ['DELIVERED'],
        })),
      );
    },
  );

  it('uses production_run_id from the query for rows without one; quoted fields may hold delimiters and newlines', async () => {
    const [runDefault, runOwn] = [
      await t.factories.run({ clientId: w.clientA.id }),
      await t.factories.run({ clientId: w.clientA.id }),
    ];
    const csv = `name,run_id,notes\n"Quoted, name",,"line one\nline two"\nplain,${runOwn.id},\n`;
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${runDefault.id}`);
    expect(res.status).toBe(201);
    expect(res.body.imported).toBe(2);
    expect(await trackersOf(runDefault.id)).toEqual([
      expect.objectContaining({ name: 'Quoted, name', notes: 'line one\nline two' }),
    ]);
    expect(await trackersOf(runOwn.id)).toEqual([expect.objectContaining({ name: 'plain' })]);
  });

  it('invalid rows → 422 with 1-based file line numbers, and nothing is written', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const before = await totals();
    const csv = [
      'name,production_run_id,status,delivery_location_id',
      `ok-1,${run.id},CREATED,`, // line 2: fine
      `,${run.id},CREATED,`, // line 3: missing name
      `bad-status,${run.id},LOST,`, // line 4
      'bad-run,abc,,', // line 5
      `"multi`,
      `line",${run.id},,x`, // lines 6-7: a line break in a name (reported at line 6, before the bad delivery id)
      '', // line 8: blank, skipped
      `hidden-run,${w.runB.id},,`, // line 9: run invisible to the user
      'unknown-run,999999,,', // line 10
      `no-destination,${run.id},DELIVERED,`, // line 11
      `in-storage,${run.id},IN_STORAGE,`, // line 12
      `unknown-destination,${run.id},,999999`, // line 13
      ',,,', // line 14: all empty, skipped
    ].join('\n');
    const res = await uploadCsv(t, w.userA.auth, csv);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: 'Import failed: 9 errors',
      imported: 0,
      errors: [
        { row: 3, field: 'name', message: 'is required' },
        { row: 4, field: 'status', message: 'must be one of CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED (got "LOST")' },
        { row: 5, field: 'production_run_id', message: 'must be a positive integer (got "abc")' },
        { row: 6, field: 'name', message: 'must not contain control characters' },
        { row: 9, field: 'production_run_id', message: 'Production run not found' },
        { row: 10, field: 'production_run_id', message: 'Production run not found' },
        { row: 11, field: 'delivery_location_id', message: 'is required when status is DELIVERED' },
        { row: 12, field: 'storage_location_id', message: 'is required when status is IN_STORAGE' },
        { row: 13, field: 'delivery_location_id', message: 'Delivery location not found' },
      ],
    });
    expect(await totals()).toEqual(before);
  });

  it('422 when a row has no run and the query gives none', async () => {
    const res = await uploadCsv(t, w.admin.auth, 'name\nlonely\n');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      {
        row: 2,
        field: 'production_run_id',
        message: 'is required (no value in the row and no production_run_id query parameter)',
      },
    ]);
  });

  it('duplicates in the file or already stored → 409 listing them; nothing written', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    await t.factories.tracker({ runId: run.id, name: 'stored' });
    const before = await totals();
    const csv = `name\nnew-1\nstored\nnew-2\nnew-1\n`;
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      detail: 'Import failed: 2 duplicates',
      imported: 0,
      errors: [
        { row: 3, field: 'name', message: `Tracker 'stored' already exists in production run ${run.id}` },
        {
          row: 5,
          field: 'name',
          message: `Tracker 'new-1' already exists in production run ${run.id} (repeated in the file)`,
        },
      ],
    });
    expect(await totals()).toEqual(before);
  });

  it('skip_duplicates=true imports the rest and reports the skipped rows', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    await t.factories.tracker({ runId: run.id, name: 'stored' });
    const res = await uploadCsv(
      t,
      w.userA.auth,
      `name\nnew-1\nstored\nnew-2\nnew-1\n`,
      `production_run_id=${run.id}&skip_duplicates=true`,
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      imported: 2,
      skipped: 2,
      duplicates: [
        { row: 3, name: 'stored', production_run_id: run.id },
        { row: 5, name: 'new-1', production_run_id: run.id },
      ],
      errors: [],
    });
    expect((await trackersOf(run.id)).map((r: { name: string }) => r.name)).toEqual(['stored', 'new-1', 'new-2']);
  });

  it('dry_run validates and reports without writing', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    await t.factories.tracker({ runId: run.id, name: 'stored' });
    const before = await totals();
    const ok = await uploadCsv(
      t,
      w.admin.auth,
      'name\na\nb\nstored\n',
      `production_run_id=${run.id}&dry_run=true&skip_duplicates=1`,
    );
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({
      imported: 2,
      skipped: 1,
      duplicates: [{ row: 4, name: 'stored', production_run_id: run.id }],
      errors: [],
    });
    const dup = await uploadCsv(t, w.admin.auth, 'name\na\nstored\n', `production_run_id=${run.id}&dry_run=TRUE`);
    expect(dup.status).toBe(409);
    const invalid = await uploadCsv(
      t,
      w.admin.auth,
      'name,status\na,LOST\n',
      `production_run_id=${run.id}&dry_run=true`,
    );
    expect(invalid.status).toBe(422);
    expect(await totals()).toEqual(before);
  });

  it.each([
    ['', 'CSV file is empty'],
    ['\uFEFF  \n\n', 'CSV file is empty'],
    ['name,notes\n', 'CSV file has a header but no data rows'],
    ['production_run_id,notes\n1,x\n', 'CSV header has no name column (expected one of: name, tracker_name, tracker)'],
    ['TRK-1,1\nTRK-2,1\n', 'CSV header row is missing: no recognised column (expected at least a name column)'],
  ])('422 with a clear detail for an unusable file %j', async (csv, detail) => {
    const res = await uploadCsv(t, w.admin.auth, csv, `production_run_id=${w.runA.id}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail });
  });

  it('422 without a file, with another field name, or with bad query values', async () => {
    const none = await t.http().post(`${TRACKERS}/import-csv`).set(w.admin.auth).field('x', '1');
    expect(none.status).toBe(422);
    expect(none.body.detail).toBe('Validation failed: file: a CSV file is required (multipart field "file")');
    const json = await t.http().post(`${TRACKERS}/import-csv`).set(w.admin.auth).send({ file: 'name\nx' });
    expect(json.status).toBe(422);
    const wrongField = await t
      .http()
      .post(`${TRACKERS}/import-csv`)
      .set(w.admin.auth)
      .attach('upload', Buffer.from('name\nx\n'), 'a.csv');
    expect(wrongField.status).toBe(422);
    for (const query of ['skip_duplicates=maybe', 'dry_run=2', 'production_run_id=abc', 'production_run_id=0']) {
      expect((await uploadCsv(t, w.admin.auth, 'name\nx\n', query)).status).toBe(422);
    }
  });

  it('413 for a file over IMPORT_MAX_BYTES, with the limit in the message', async () => {
    const before = await totals();
    const big = Buffer.alloc(20 * 1024 * 1024 + 1, 'a');
    big.write('name\n');
    const res = await uploadCsv(t, w.admin.auth, big, `production_run_id=${w.runA.id}`);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'File too large. Maximum size is 20 MB' });
    expect(await totals()).toEqual(before);
  });

  it('imports 100 000 rows in one request; one more row is refused with 413', async () => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const lines = ['name;status;notes'];
    for (let i = 1; i <= 100_000; i++) lines.push(`BULK-${i};${i % 2 ? 'in transit' : 'created'};row ${i}`);
    const res = await uploadCsv(t, w.userA.auth, `${lines.join('\n')}\n`, `production_run_id=${run.id}`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 100_000, skipped: 0, duplicates: [], errors: [] });
    const [stats] = await t.db.query(
      `SELECT count(*)::int AS trackers, count(*) FILTER (WHERE t.status = 'IN_TRANSIT')::int AS in_transit,
              (SELECT count(*)::int FROM tracker_status_history h JOIN trackers x ON x.id = h.tracker_id WHERE x.production_run_id = $1) AS entries
         FROM trackers t WHERE t.production_run_id = $1`,
      [run.id],
    );
    expect(stats).toEqual({ trackers: 100_000, in_transit: 50_000, entries: 100_000 });

    const before = await totals();
    lines.push('BULK-100001;created;x');
    const tooMany = await uploadCsv(
      t,
      w.userA.auth,
      lines.join('\n').replaceAll('BULK-', 'MORE-'),
      `production_run_id=${run.id}`,
    );
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toEqual({ detail: 'Too many rows: the maximum is 100000 data rows' });
    expect(await totals()).toEqual(before);
  });
});
