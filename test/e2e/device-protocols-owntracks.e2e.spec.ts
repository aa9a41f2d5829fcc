import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestApp } from '../support/app.js';
import { deviceFixture, deviceTracker, OWNTRACKS, storedReports, uniqueDeviceId } from '../support/devices.js';
import { createTrackerWorld, type TrackerWorld } from '../support/trackers.js';

const NOW_S = () => Math.floor(Date.now() / 1000);

describe('Device protocols over HTTP: OwnTracks', () => {
  let t: TestApp;
  let w: TrackerWorld;
  const fresh = () => deviceTracker(t, w.runA.id);

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld());
  });
  afterAll(() => t?.close());

  describe('OwnTracks', () => {
    it('stores a location (golden fixture) named by X-Limit-D, answering []', async () => {
      const device = await fresh();
      const res = await t
        .http()
        .post(OWNTRACKS)
        .set(w.ingest.auth)
        .set('X-Limit-D', device.deviceId)
        .set('X-Limit-U', 'owner')
        .type('json')
        .send(deviceFixture('owntracks-location.json'))
        .expect(200);
      expect(res.body).toEqual([]);
      expect(await storedReports(t, device.id)).toEqual([
        {
          timestamp: '2025-11-28T08:56:20.000Z',
          latitude: 52.5203,
          longitude: 13.4049,
          confidence: 3,
          accuracy_m: 14,
          battery: 76,
          source: 'owntracks',
        },
      ]);
    });

    it('takes the device from ?d= too', async () => {
      const device = await fresh();
      await t
        .http()
        .post(`${OWNTRACKS}?d=${device.deviceId}`)
        .set(w.ingest.auth)
        .send({ _type: 'location', lat: 1, lon: 2, tst: NOW_S() - 60 })
        .expect(200, []);
      expect(await storedReports(t, device.id)).toHaveLength(1);
    });

    it.each(['owntracks-transition.json', 'owntracks-waypoint.json'])(
      'answers %s with 200 [] and stores nothing',
      async (fixture) => {
        const device = await fresh();
        await t
          .http()
          .post(OWNTRACKS)
          .set(w.ingest.auth)
          .set('X-Limit-D', device.deviceId)
          .type('json')
          .send(deviceFixture(fixture))
          .expect(200, []);
        expect(await storedReports(t, device.id)).toEqual([]);
      },
    );

    it('answers an unknown device with 404 Device not found', async () => {
      const res = await t
        .http()
        .post(OWNTRACKS)
        .set(w.ingest.auth)
        .set('X-Limit-D', uniqueDeviceId('unknown'))
        .send({ _type: 'location', lat: 1, lon: 2, tst: NOW_S() });
      expect([res.status, res.body]).toEqual([404, { detail: 'Device not found' }]);
    });

    it.each([
      ['no lat, lon or tst', { _type: 'location' }, ['lat', 'lon', 'tst']],
      ['lat as a string', { _type: 'location', lat: '52.5', lon: 13, tst: 1764320000 }, ['lat']],
      ['a tst 10 minutes ahead', { _type: 'location', lat: 1, lon: 2, tst: 0 }, ['tst']],
      ['a battery of 7.5', { _type: 'location', lat: 1, lon: 2, tst: 1764320000, batt: 7.5 }, ['batt']],
      ['no _type', { lat: 1, lon: 2, tst: 1764320000 }, ['_type']],
      ['a list', [{ _type: 'location' }], ['body']],
    ])('answers a message with %s with 422 naming the fields, storing nothing', async (_, body, fields) => {
      const device = await fresh();
      const sent = 'tst' in body && body.tst === 0 ? { ...body, tst: NOW_S() + 600 } : body;
      const res = await t.http().post(OWNTRACKS).set(w.ingest.auth).set('X-Limit-D', device.deviceId).send(sent);
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
      expect(res.body.detail).toMatch(/^Validation failed: /);
      expect(await storedReports(t, device.id)).toEqual([]);
    });

    it('answers a message without a device with 422', async () => {
      const res = await t.http().post(OWNTRACKS).set(w.ingest.auth).send({ _type: 'location', lat: 1, lon: 2, tst: 1 });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].field).toBe('d');
    });
  });
});
