import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKey, INVALID_CREDENTIALS, NOT_ENOUGH_PERMISSIONS, xApiKey } from '../support/api-keys.js';
import type { TestApp } from '../support/app.js';
import { deviceFixture, deviceTracker, OSMAND, OWNTRACKS, storedReports } from '../support/devices.js';
import { createTrackerWorld, type TrackerWorld } from '../support/trackers.js';

const NOW_S = () => Math.floor(Date.now() / 1000);

describe('Device protocols over HTTP: OsmAnd / Traccar Client, and who may report', () => {
  let t: TestApp;
  let w: TrackerWorld;
  const fresh = () => deviceTracker(t, w.runA.id);

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
  });
  afterAll(() => t?.close());

  describe('OsmAnd', () => {
    it('stores a Traccar Client GET (golden fixture): 200 with an empty body, confidence 3, source osmand, speed and the like ignored', async () => {
      const device = await fresh();
      const query = deviceFixture('osmand-traccar-client.query', { device: device.deviceId });
      const res = await t.http().get(`${OSMAND}?${query}`).set(w.ingest.auth).expect(200);
      expect(res.text).toBe('');
      expect(await storedReports(t, device.id)).toEqual([
        {
          timestamp: '2025-11-28T08:53:20.000Z',
          latitude: 52.520008,
          longitude: 13.404954,
          confidence: 3,
          accuracy_m: 12,
          battery: 81,
          source: 'osmand',
        },
      ]);
      // The same report again: still 200, still one copy.
      await t.http().get(`${OSMAND}?${query}`).set(w.ingest.auth).expect(200);
      expect(await storedReports(t, device.id)).toHaveLength(1);
    });

    it('takes a form POST (milliseconds, battery rounded) and a POST with only query fields', async () => {
      const device = await fresh();
      await t
        .http()
        .post(OSMAND)
        .set(w.ingest.auth)
        .type('form')
        .send(deviceFixture('osmand-form-milliseconds.form', { device: device.deviceId }))
        .expect(200);
      await t
        .http()
        .post(`${OSMAND}?${deviceFixture('osmand-iso-offset.query', { device: device.deviceId })}`)
        .set(w.ingest.auth)
        .expect(200);
      expect(await storedReports(t, device.id)).toEqual([
        expect.objectContaining({ timestamp: '2025-11-28T08:54:20.000Z', accuracy_m: 8.5, battery: 81 }),
        expect.objectContaining({ timestamp: '2025-11-28T08:55:20.000Z', latitude: 52.522, accuracy_m: null }),
      ]);
    });

    it('takes the JSON of Traccar Client 9 and later (golden fixture), also when it comes labelled as a form', async () => {
      const [json, labelled] = [await fresh(), await fresh()];
      for (const [device, type] of [
        [json, 'json'],
        [labelled, 'form'],
      ] as const) {
        const body = JSON.stringify(JSON.parse(deviceFixture('traccar-client-9.json', { device: device.deviceId })));
        const res = await t.http().post(OSMAND).set(w.ingest.auth).type(type).send(body);
        expect([res.status, res.text]).toEqual([200, '']);
        expect(await storedReports(t, device.id)).toEqual([
          {
            timestamp: '2025-11-28T08:57:46.587Z',
            latitude: -37.6998277,
            longitude: 145.0686733,
            confidence: 3,
            accuracy_m: 4.32,
            battery: 88,
            source: 'osmand',
          },
        ]);
      }
      const noCoords = await t
        .http()
        .post(OSMAND)
        .set(w.ingest.auth)
        .send({ device_id: json.deviceId, location: { timestamp: '2025-11-28T08:58:00Z' } });
      expect([noCoords.status, noCoords.body]).toEqual([400, { detail: 'lat: is required' }]);
    });

    it.each([
      ['seconds', '1764320000', '2025-11-28T08:53:20.000Z'],
      ['seconds with decimals', '1764320000.25', '2025-11-28T08:53:20.250Z'],
      ['milliseconds', '1764320000123', '2025-11-28T08:53:20.123Z'],
      ['ISO 8601 UTC', '2025-11-28T08:53:20Z', '2025-11-28T08:53:20.000Z'],
      ['ISO 8601 with an offset whose + arrived as a space', '2025-11-28T09:53:20 01:00', '2025-11-28T08:53:20.000Z'],
    ])('reads a timestamp in %s', async (_, timestamp, stored) => {
      const device = await fresh();
      await t
        .http()
        .get(OSMAND)
        .query({ id: device.deviceId, lat: '1.5', lon: '2.5', timestamp })
        .set(w.ingest.auth)
        .expect(200);
      expect((await storedReports(t, device.id)).map((r) => r.timestamp)).toEqual([stored]);
    });

    it('stamps a report without timestamp with the time of receipt', async () => {
      const device = await fresh();
      const before = Date.now();
      await t.http().get(OSMAND).query({ id: device.deviceId, lat: '1', lon: '2' }).set(w.ingest.auth).expect(200);
      const [stored] = await storedReports(t, device.id);
      expect(Date.parse(stored.timestamp)).toBeGreaterThanOrEqual(before - 1);
      expect(Date.parse(stored.timestamp)).toBeLessThanOrEqual(Date.now());
    });

    it.each([
      ['an unknown device', { id: 'nobody-has-this', lat: '1', lon: '2' }, 'Device not found'],
      ['no id', { lat: '1', lon: '2' }, 'id: is required'],
      [
        'a malformed id',
        { id: 'a b', lat: '1', lon: '2' },
        'id: must be 1..128 characters of letters, digits and . _ : -',
      ],
      ['no lat', { id: 'DEVICE', lon: '2' }, 'lat: is required'],
      ['lat out of range', { id: 'DEVICE', lat: '91', lon: '2' }, 'lat: must be a number between -90 and 90'],
      ['lon not a number', { id: 'DEVICE', lat: '1', lon: 'east' }, 'lon: must be a number between -180 and 180'],
      ['negative accuracy', { id: 'DEVICE', lat: '1', lon: '2', accuracy: '-1' }, 'accuracy: must be a number >= 0'],
      [
        'battery over 100',
        { id: 'DEVICE', lat: '1', lon: '2', batt: '101' },
        'batt: must be a number between 0 and 100',
      ],
      [
        'a bad timestamp',
        { id: 'DEVICE', lat: '1', lon: '2', timestamp: 'yesterday' },
        'timestamp: must be Unix seconds, Unix milliseconds or an ISO 8601 date-time',
      ],
      [
        'a timestamp 10 minutes ahead',
        { id: 'DEVICE', lat: '1', lon: '2', timestamp: String(NOW_S() + 600) },
        'timestamp: must not be more than 5 minutes in the future',
      ],
    ])('answers %s with 400 and a detail, storing nothing', async (_, query: Record<string, string>, detail) => {
      const device = await fresh();
      const params = { ...query, ...(query.id === 'DEVICE' ? { id: device.deviceId } : {}) };
      const res = await t.http().get(OSMAND).query(params).set(w.ingest.auth);
      expect([res.status, res.body]).toEqual([400, { detail }]);
      expect(await storedReports(t, device.id)).toEqual([]);
    });

    it('refuses a repeated field and a JSON body of another shape with 400', async () => {
      const device = await fresh();
      const repeated = await t.http().get(`${OSMAND}?id=${device.deviceId}&lat=1&lat=2&lon=3`).set(w.ingest.auth);
      expect([repeated.status, repeated.body]).toEqual([400, { detail: 'lat: must be given once, as a single value' }]);
      const json = await t.http().post(OSMAND).set(w.ingest.auth).send({ id: device.deviceId, lat: 1, lon: 2 });
      expect([json.status, json.body]).toEqual([
        400,
        {
          detail:
            "body: send the fields as a form (application/x-www-form-urlencoded), in the query, or as Traccar Client's JSON",
        },
      ]);
      expect(await storedReports(t, device.id)).toEqual([]);
    });
    it.each([
      ['malformed JSON', 'application/json', '{"id": ', 'body: malformed JSON'],
      [
        'JSON nested too deep',
        'application/json',
        `${'['.repeat(40)}${']'.repeat(40)}`,
        'body: must not be nested more than 32 levels deep',
      ],
      [
        'a JSON body over its limit',
        'application/json',
        JSON.stringify({ id: 'x'.repeat(70_000) }),
        'Request body too large',
      ],
      [
        'a form of too many fields',
        'application/x-www-form-urlencoded',
        'a=1&'.repeat(1_001),
        'body: too many parameters',
      ],
      [
        'a form with a control character',
        'application/x-www-form-urlencoded',
        'id=a%00b&lat=1&lon=2',
        'id: must not contain control characters',
      ],
    ])('answers a body it cannot read (%s) with 400 and a detail', async (_, type, body, detail) => {
      const res = await t.http().post(OSMAND).set(w.ingest.auth).set('Content-Type', type).send(body);
      expect([res.status, res.body]).toEqual([400, { detail }]);
    });

    it('answers an encoding it does not read, and a control character in the query, with 400 too', async () => {
      const encoded = await t
        .http()
        .post(OSMAND)
        .set(w.ingest.auth)
        .set({ 'Content-Type': 'application/json', 'Content-Encoding': 'compress' })
        .send('{}');
      expect([encoded.status, encoded.body]).toEqual([
        400,
        { detail: 'Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br' },
      ]);
      const query = await t.http().get(`${OSMAND}?id=a%00b&lat=1&lon=2`).set(w.ingest.auth);
      expect([query.status, query.body]).toEqual([400, { detail: 'id: must not contain control characters' }]);
      // OwnTracks keeps the usual answers: the rule belongs to the OsmAnd routes.
      const owntracks = await t
        .http()
        .post(`${OWNTRACKS}?d=DEVICE`)
        .set(w.ingest.auth)
        .set('Content-Type', 'application/json')
        .send('{"_type": ');
      expect([owntracks.status, owntracks.body.detail]).toEqual([422, 'Validation failed: body: malformed JSON']);
    });
  });

  describe('who may report', () => {
    it('answers no credentials and a bad key with 401, a user token and a key without the ingest scope with 403', async () => {
      const device = await fresh();
      const query = { id: device.deviceId, lat: '1', lon: '2' };
      const anonymous = await t.http().get(OSMAND).query(query);
      expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'Not authenticated' }]);
      const badKey = await t.http().post(OWNTRACKS).set(xApiKey('tps_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'));
      expect([badKey.status, badKey.body]).toEqual([401, INVALID_CREDENTIALS]);
      const user = await t.http().get(OSMAND).query(query).set(w.userA.auth);
      expect([user.status, user.body]).toEqual([403, NOT_ENOUGH_PERMISSIONS]);
      const readKey = await createKey(t, w.admin.auth, { scopes: ['read', 'write'] });
      for (const res of [
        await t.http().get(OSMAND).query(query).set(xApiKey(readKey.key)),
        await t.http().post(OSMAND).query(query).set(xApiKey(readKey.key)),
        await t.http().post(OWNTRACKS).query({ d: device.deviceId }).set(xApiKey(readKey.key)).send({ _type: 'x' }),
      ])
        expect([res.status, res.body]).toEqual([403, NOT_ENOUGH_PERMISSIONS]);
      expect(await storedReports(t, device.id)).toEqual([]);
    });

    it('takes an ingest key and an admin token; a key narrowed to client A finds no device of client B', async () => {
      const [a, b] = [await fresh(), await deviceTracker(t, w.runB.id)];
      const key = await createKey(t, w.admin.auth, { user_id: w.ingest.id, scopes: ['ingest'] });
      await t.http().get(OSMAND).query({ id: a.deviceId, lat: '1', lon: '2' }).set(xApiKey(key.key)).expect(200);
      await t.http().get(OSMAND).query({ id: b.deviceId, lat: '1', lon: '2' }).set(w.admin.auth).expect(200);
      const narrowed = await createKey(t, w.admin.auth, { scopes: ['ingest'], client_ids: [w.clientA.id] });
      const osmand = await t
        .http()
        .get(OSMAND)
        .query({ id: b.deviceId, lat: '3', lon: '4' })
        .set(xApiKey(narrowed.key));
      expect([osmand.status, osmand.body]).toEqual([400, { detail: 'Device not found' }]);
      const owntracks = await t
        .http()
        .post(OWNTRACKS)
        .set(xApiKey(narrowed.key))
        .set('X-Limit-D', b.deviceId)
        .send({ _type: 'location', lat: 3, lon: 4, tst: NOW_S() });
      expect([owntracks.status, owntracks.body]).toEqual([404, { detail: 'Device not found' }]);
      await t
        .http()
        .post(OWNTRACKS)
        .set(xApiKey(narrowed.key))
        .set('X-Limit-D', a.deviceId)
        .send({ _type: 'location', lat: 3, lon: 4, tst: NOW_S() })
        .expect(200, []);
      expect(await storedReports(t, a.id)).toHaveLength(2);
      expect(await storedReports(t, b.id)).toHaveLength(1);
    });
  });
});
