import { randomBytes } from 'node:crypto';
import type { TestApp } from '../support/app.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * The public routes' per-IP limit at its default (60 requests a minute, JSON view and page
 * together, static assets not counted): guessing tokens yields only 404s, then 429s.
 */
const LIMIT = 60;

describe('Share links: token enumeration', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  it('1 000 random tokens: all 404 up to the limit, then 429 with Retry-After — and a valid link waits too', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    const link = (await t.http().post(`${TRACKERS}/${tracker.id}/share-links`).set(w.userA.auth).send({}).expect(201))
      .body;
    // Static assets of the page are not counted.
    for (let i = 0; i < 80; i += 1) await t.http().get('/track-assets/leaflet.js').expect(200);

    const statuses: number[] = [];
    for (let i = 0; i < 1000; i += 1) {
      const token = randomBytes(32).toString('base64url');
      const res =
        i % 2 === 0 ? await t.http().get(`/api/v1/public/track/${token}`) : await t.http().get(`/track/${token}`);
      statuses.push(res.status);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      if (res.status === 429) {
        expect(res.body).toEqual({ detail: 'Too many requests. Try again later.' });
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(404));
    expect(statuses.slice(LIMIT)).toEqual(Array(1000 - LIMIT).fill(429));

    const valid = await t.http().get(`/api/v1/public/track/${link.token}`);
    expect(valid.status).toBe(429);
    await t.http().get('/track-assets/track-page.js').expect(200);
  });
});
