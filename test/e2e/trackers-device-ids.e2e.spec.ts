import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApp } from '../support/app.js';
import { createTrackerWorld, TRACKERS, uploadCsv, type TrackerWorld } from '../support/trackers.js';

describe('Tracker device ids', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let seq = 0;
  const unique = (prefix = 'dev') => `${prefix}-${process.pid}-${++seq}`;

  const create = (body: Record<string, unknown>, auth = w.admin.auth) =>
    t
      .http()
      .post(TRACKERS)
      .set(auth)
      .send({ name: unique('trk'), production_run_id: w.runA.id, ...body });

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
  });
  afterAll(() => t?.close());

  it('is stored on create, shown everywhere a tracker is, and null when unset', async () => {
    const deviceId = `imei:${unique('356938')}`;
    const created = await create({ device_id: deviceId }).expect(201);
    expect(created.body.device_id).toBe(deviceId);
    const detail = await t.http().get(`${TRACKERS}/${created.body.id}`).set(w.admin.auth).expect(200);
    expect(detail.body.device_id).toBe(deviceId);
    const list = await t.http().get(`${TRACKERS}?limit=1000`).set(w.admin.auth).expect(200);
    expect(list.body.items.find((i: { id: number }) => i.id === created.body.id).device_id).toBe(deviceId);
    const plain = await create({}).expect(201);
    expect(plain.body.device_id).toBeNull();
  });

  it("refuses another tracker's device id with 409, across clients; the comparison is case-sensitive", async () => {
    const deviceId = unique('Relay.A_1:x');
    await create({ device_id: deviceId }).expect(201);
    const res = await create({ device_id: deviceId, production_run_id: w.runB.id }).expect(409);
    expect(res.body).toEqual({ detail: `Device id '${deviceId}' is already in use` });
    await create({ device_id: deviceId.toUpperCase() }).expect(201);
  });

  it('answers concurrent claims of one device id with exactly one 201, the rest 409', async () => {
    const deviceId = unique('race');
    const answers = await Promise.all(Array.from({ length: 8 }, () => create({ device_id: deviceId })));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const [{ n }] = (await t.db.query('SELECT count(*)::int AS n FROM trackers WHERE device_id = $1', [deviceId])) as {
      n: number;
    }[];
    expect(n).toBe(1);
  });

  it('is changed and cleared (null) by PUT; a taken one is 409 and changes nothing', async () => {
    const taken = unique('taken');
    await create({ device_id: taken }).expect(201);
    const own = await create({ device_id: unique('own') }).expect(201);
    const id = own.body.id as number;
    const next = unique('next');
    const changed = await t.http().put(`${TRACKERS}/${id}`).set(w.admin.auth).send({ device_id: next }).expect(200);
    expect(changed.body.device_id).toBe(next);
    const refused = await t
      .http()
      .put(`${TRACKERS}/${id}`)
      .set(w.admin.auth)
      .send({ device_id: taken, notes: 'not kept' })
      .expect(409);
    expect(refused.body).toEqual({ detail: `Device id '${taken}' is already in use` });
    const after = await t.http().get(`${TRACKERS}/${id}`).set(w.admin.auth).expect(200);
    expect([after.body.device_id, after.body.notes]).toEqual([next, null]);
    const cleared = await t.http().put(`${TRACKERS}/${id}`).set(w.admin.auth).send({ device_id: null }).expect(200);
    expect(cleared.body.device_id).toBeNull();
    await t.http().put(`${TRACKERS}/${id}`).set(w.admin.auth).send({ notes: 'kept' }).expect(200);
  });

  it.each([
    ['empty', ''],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'dev 1'],
    ['a slash', 'dev/1'],
    ['a non-ASCII letter', 'gerät-1'],
    ['a number', 12345],
  ])('refuses a device id with %s: 422 naming the field', async (_, value) => {
    const res = await create({ device_id: value }).expect(422);
    expect(res.body.detail).toMatch(/^Validation failed: device_id: /);
    expect(res.body.errors[0].field).toBe('device_id');
  });

  it('is imported from a device_id, device or imei column; repeats and taken ids are row errors (422), nothing imported', async () => {
    const [a, b] = [unique('csv'), unique('csv')];
    const ok = await uploadCsv(
      t,
      w.admin.auth,
      `name,imei\n${unique('n')},${a}\n${unique('n')},\n`,
      `production_run_id=${w.runA.id}`,
    );
    expect(ok.status).toBe(201);
    expect(ok.body.imported).toBe(2);
    const rows = (await t.db.query('SELECT device_id FROM trackers WHERE device_id = $1', [a])) as unknown[];
    expect(rows).toHaveLength(1);

    const before = (await t.db.query('SELECT count(*)::int AS n FROM trackers')) as { n: number }[];
    const bad = await uploadCsv(
      t,
      w.admin.auth,
      `name,device\n${unique('n')},${b}\n${unique('n')},${b}\n${unique('n')},${a}\n${unique('n')},bad id\n`,
      `production_run_id=${w.runA.id}`,
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toBe('Import failed: 3 errors');
    expect(bad.body.errors).toEqual([
      { row: 3, field: 'device_id', message: `Device id '${b}' is already in use (repeated in the file)` },
      { row: 4, field: 'device_id', message: `Device id '${a}' is already in use` },
      { row: 5, field: 'device_id', message: expect.stringMatching(/^must be 1\.\.128 characters/) },
    ]);
    const after = (await t.db.query('SELECT count(*)::int AS n FROM trackers')) as { n: number }[];
    expect(after[0].n).toBe(before[0].n);
  });

  it('leaves duplicate rows out of the device-id check: a re-import is skipped or answered 409, an identical repeated row is a duplicate', async () => {
    const run = `production_run_id=${w.runA.id}`;
    const [n1, n2, d1, d2] = [unique('n'), unique('n'), unique('csv'), unique('csv')];
    const file = `name,device_id\n${n1},${d1}\n${n2},${d2}\n`;
    expect((await uploadCsv(t, w.admin.auth, file, run)).status).toBe(201);

    const skipped = await uploadCsv(t, w.admin.auth, file, `${run}&skip_duplicates=true`);
    expect([skipped.status, skipped.body.imported, skipped.body.skipped]).toEqual([201, 0, 2]);
    const refused = await uploadCsv(t, w.admin.auth, file, run);
    expect([refused.status, refused.body.detail]).toEqual([409, 'Import failed: 2 duplicates']);
    expect(refused.body.errors.map((e: { row: number; field: string }) => [e.row, e.field])).toEqual([
      [2, 'name'],
      [3, 'name'],
    ]);

    // A new row still may not take the device id of the tracker a skipped row repeats.
    const taken = await uploadCsv(t, w.admin.auth, `${file}${unique('n')},${d1}\n`, `${run}&skip_duplicates=true`);
    expect([taken.status, taken.body.errors]).toEqual([
      422,
      [{ row: 4, field: 'device_id', message: `Device id '${d1}' is already in use` }],
    ]);

    const [n3, d3] = [unique('n'), unique('csv')];
    const repeated = `name,device_id\n${n3},${d3}\n${n3},${d3}\n`;
    const twice = await uploadCsv(t, w.admin.auth, repeated, run);
    expect([twice.status, twice.body.errors]).toEqual([
      409,
      [
        {
          row: 3,
          field: 'name',
          message: `Tracker '${n3}' already exists in production run ${w.runA.id} (repeated in the file)`,
        },
      ],
    ]);
    const once = await uploadCsv(t, w.admin.auth, repeated, `${run}&skip_duplicates=true`);
    expect([once.status, once.body.imported, once.body.skipped]).toEqual([201, 1, 1]);
    const stored = (await t.db.query('SELECT name FROM trackers WHERE device_id = $1', [d3])) as { name: string }[];
    expect(stored).toEqual([{ name: n3 }]);
  });
});
