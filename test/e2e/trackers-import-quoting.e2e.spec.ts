import type { TestApp } from '../support/app.js';
import { countRows, createTrackerWorld, uploadCsv, type TrackerWorld } from '../support/trackers.js';

/** Broken quoting is never passed over: it refuses the file, naming the physical line. */
describe('POST /trackers/import-csv: broken quoting', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  it.each([
    ['a stray quote on a line of its own', 'name,notes\nA,n\n"\n', 'quoted field starting on line 3 is not closed'],
    [
      'an unclosed quote after empty cells',
      'name,notes\r\nA,n\r\n,"\r\n',
      'quoted field starting on line 3 is not closed',
    ],
    [
      'spaces after an empty quoted cell',
      'name,notes\rA,n\r"" \rB,m\r',
      'unexpected text after a closing quote on line 3',
    ],
  ])('%s is a row error even though its cells are blank', async (_label, csv, message) => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect([res.status, res.body]).toEqual([
      422,
      {
        detail: 'Import failed: 1 errors',
        imported: 0,
        errors: [{ row: 3, field: 'row', message: `malformed CSV: ${message}` }],
      },
    ]);
    expect(await countRows(t.db, 'trackers', 'production_run_id = $1', [run.id])).toBe(0);
  });

  it.each([
    ['text after a closing quote', 'name,"notes" \nA,x\n', 'unexpected text after a closing quote on line 1'],
    ['a quote that is never closed', 'name,"notes\nA,x\n', 'quoted field starting on line 1 is not closed'],
    [
      'broken quoting after blank lines',
      '\r\n\n"name"x;notes\nA;x\n',
      'unexpected text after a closing quote on line 3',
    ],
  ])('a header with %s refuses the file', async (_label, csv, message) => {
    const run = await t.factories.run({ clientId: w.clientA.id });
    const res = await uploadCsv(t, w.userA.auth, csv, `production_run_id=${run.id}`);
    expect([res.status, res.body]).toEqual([422, { detail: `CSV header is malformed: ${message}` }]);
    expect(await countRows(t.db, 'trackers', 'production_run_id = $1', [run.id])).toBe(0);
  });
});
