import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { TracksRepository } from '../../src/tracks/tracks.repository.js';
import { closeApps, createPeerApp, type TestApp } from '../support/app.js';
import { postReports, report } from '../support/locations.js';
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

/**
 * Which address the limit counts: with TRUST_PROXY the one our proxy appended to `X-Forwarded-For`
 * (the client's), so two clients behind the proxy count separately and a forged leftmost entry
 * changes nothing; without it the connection's address, whatever the header says. A limit of 3
 * keeps the cases short.
 */
describe('Share links: the per-IP limit behind a proxy', () => {
  const PER_MINUTE = 3;
  let proxied: { t: TestApp; w: TrackerWorld };
  let direct: TestApp;
  let token: string;

  beforeAll(async () => {
    const env = { PUBLIC_TRACK_REQUESTS_PER_MINUTE: String(PER_MINUTE) };
    proxied = await createTrackerWorld({ env: { ...env, TRUST_PROXY: 'true' } });
    direct = await createPeerApp(proxied.t, { env });
    const tracker = await proxied.t.factories.tracker({ runId: proxied.w.runA.id });
    token = (
      await proxied.t
        .http()
        .post(`${TRACKERS}/${tracker.id}/share-links`)
        .set(proxied.w.userA.auth)
        .send({})
        .expect(201)
    ).body.token;
  });
  afterAll(() => closeApps(direct, proxied?.t));

  /** A public view request whose `X-Forwarded-For` is `forwardedFor` (the proxy appends the last entry). */
  const via = (app: TestApp, forwardedFor: string) =>
    app.http().get(`/api/v1/public/track/${token}`).set('X-Forwarded-For', forwardedFor);

  it('with TRUST_PROXY: each forwarded client address has its own count; a forged entry before it does not help', async () => {
    const first = '203.0.113.10';
    const second = '203.0.113.20';
    for (let i = 0; i < PER_MINUTE; i += 1) await via(proxied.t, `198.51.100.${i}, ${first}`).expect(200);
    const refused = await via(proxied.t, `198.51.100.99, ${first}`).expect(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await via(proxied.t, first).expect(429);
    // Another client behind the same proxy is not held back by the first one's requests.
    for (let i = 0; i < PER_MINUTE; i += 1) await via(proxied.t, `${first}, ${second}`).expect(200);
    await via(proxied.t, second).expect(429);
  });

  it('without TRUST_PROXY: the connection counts, and X-Forwarded-For changes nothing', async () => {
    for (let i = 0; i < PER_MINUTE; i += 1) await via(direct, `203.0.113.${100 + i}`).expect(200);
    await via(direct, '203.0.113.200').expect(429);
    await direct.http().get(`/api/v1/public/track/${token}`).expect(429);
  });
});

/**
 * The page's route reads the tracker's whole track on a cache miss: views that miss together (a
 * link just shared with many people) wait for one read on the instance instead of each reading it.
 */
describe('Share links: concurrent first views of a page', () => {
  let t: TestApp;
  let w: TrackerWorld;

  beforeAll(async () => ({ t, w } = await createTrackerWorld()));
  afterAll(() => t.close());

  it('ten views at once read the track once and draw the same route; the next view reads the cache', async () => {
    const tracker = await t.factories.tracker({ runId: w.runA.id });
    const start = Date.now() - 10 * 60_000;
    const reports = [0, 1, 2, 3].map((i) =>
      report(tracker.id, new Date(start + i * 60_000).toISOString(), { latitude: 48 + i / 10, longitude: 11 + i / 10 }),
    );
    expect((await postReports(t, w.ingest, reports)).status).toBe(200);
    const link = (
      await t
        .http()
        .post(`${TRACKERS}/${tracker.id}/share-links`)
        .set(w.userA.auth)
        .send({ location_precision: 'exact' })
        .expect(201)
    ).body;

    // The real read, made slow enough that every view arrives while the first is still reading.
    const tracks = t.app.get(TracksRepository);
    const openTrack = tracks.openTrack.bind(tracks);
    const reads = jest.spyOn(tracks, 'openTrack').mockImplementation(async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return openTrack(...args);
    });
    try {
      const pages = await Promise.all(Array.from({ length: 10 }, () => t.http().get(link.url_path)));
      expect(pages.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(reads).toHaveBeenCalledTimes(1);
      const routes = pages.map((res) => JSON.stringify(routeOf(res.text)));
      expect(new Set(routes).size).toBe(1);
      expect(routeOf(pages[0].text)).toHaveLength(4);

      await t.http().get(link.url_path).expect(200);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });
});

/** The route in the page's data block. */
function routeOf(html: string): unknown[] {
  const match = /<script type="application\/json" id="track-data">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error('no data block');
  return JSON.parse(match[1]).route;
}
