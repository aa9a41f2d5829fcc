import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { backdatedTracker, HOUR } from '../support/alerts.js';
import { closeApps, createPeerApp, type TestApp } from '../support/app.js';
import { CHROMIUM, describeWithBrowser } from '../support/browser.js';
import { at, createGeofenceWorld, FAR, IN_D, north, ORIGIN, sendTimeline, settled } from '../support/geofences.js';
import type { TrackerWorld } from '../support/trackers.js';

/**
 * The public tracking page in a real browser (Debian's chromium driven by playwright-core) on a
 * phone-sized viewport: the route drawn with every vertex the service kept, the status timeline,
 * nothing loaded from another origin, no CSP violation, no sideways scrolling, map and timeline shown
 * (phone layout); the arrival estimate; tiles only from MAP_TILE_URL's server (each of its `{s}`
 * subdomains) when it is set; no map on a `none` link; a revoked link shows the 404 page. A
 * screenshot is kept under test-artifacts/ (its path is printed).
 */
const describeIfBrowser = describeWithBrowser();
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

describeIfBrowser('the public tracking page in a real browser', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let browser: Browser;
  let base: string;
  let tracker: { id: number; name: string };

  beforeAll(async () => {
    ({ t, w } = await createGeofenceWorld());
    tracker = await t.factories.tracker({ runId: w.runA.id, createdAt: at(0) });
    await sendTimeline(t, w.ingest, tracker.id, [
      [1, FAR],
      [5, { ...north(-20_000), longitude: ORIGIN.longitude + 0.08 }],
      [10, ORIGIN],
      [50, ORIGIN],
      [60, north(5000)],
      [75, { ...north(12_000), longitude: ORIGIN.longitude - 0.06 }],
      [90, IN_D],
      [100, IN_D],
    ]);
    await settled(t);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A page on a phone-sized viewport that records every request and every CSP complaint. */
  async function phonePage(): Promise<{ page: Page; requests: string[]; complaints: string[] }> {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const requests: string[] = [];
    const complaints: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && complaints.push(m.text()));
    page.on('pageerror', (e) => complaints.push(e.message));
    return { page, requests, complaints };
  }

  /** The phone layout holds: no sideways scrolling; the map and the timeline shown (not hidden, not collapsed). */
  async function fitsThePhone(page: Page): Promise<void> {
    const widths = await page.evaluate<{ scroll: number; viewport: number }>(
      '({ scroll: document.documentElement.scrollWidth, viewport: window.innerWidth })',
    );
    expect(widths.viewport).toBe(390);
    expect(widths.scroll).toBeLessThanOrEqual(widths.viewport);
    expect(await page.locator('#map').isVisible()).toBe(true);
    expect(await page.locator('#timeline').isVisible()).toBe(true);
  }

  const createLink = async (location_precision = 'exact', trackerId = tracker.id) =>
    (
      await t
        .http()
        .post(`/api/v1/trackers/${trackerId}/share-links`)
        .set(w.userA.auth)
        .send({ location_precision })
        .expect(201)
    ).body as { id: number; url_path: string };

  it('draws the route, lists the timeline and loads nothing from another origin', async () => {
    const link = await createLink();
    // The page draws the track simplified with 10 m for an exact link.
    const track = JSON.parse(
      (await t.http().get(`/api/v1/trackers/${tracker.id}/track?simplify_m=10`).set(w.admin.auth)).text,
    );
    // Consecutive reports at the same place are one vertex.
    const coordinates = (track.features[0].geometry.coordinates as number[][]).map((c) => c.join(','));
    const vertices = coordinates.filter((c, i) => i === 0 || c !== coordinates[i - 1]).length;
    expect(vertices).toBeLessThan(coordinates.length);
    expect(vertices).toBeGreaterThan(2);
    const history = (await t.http().get(`/api/v1/trackers/${tracker.id}/status-history`).set(w.admin.auth)).body;

    const { page, requests, complaints } = await phonePage();
    try {
      const response = await page.goto(`${base}${link.url_path}`);
      expect(response?.status()).toBe(200);
      const headers = response!.headers();
      expect(headers['content-security-policy']).toContain("script-src 'self'");
      expect(headers['content-security-policy']).not.toContain('unsafe-inline');
      expect(headers['cache-control']).toBe('no-store');
      expect(headers['referrer-policy']).toBe('no-referrer');

      const route = page.locator('path.route');
      await route.waitFor({ state: 'attached' });
      const d = (await route.getAttribute('d')) ?? '';
      expect(d.match(/[ML]/g)?.length).toBe(vertices);
      expect(await page.locator('.leaflet-control-scale-line').count()).toBeGreaterThan(0);
      expect(await page.locator('.leaflet-tile').count()).toBe(0);

      const entries = page.locator('#timeline li');
      expect(await entries.count()).toBe(history.length);
      expect(await entries.first().textContent()).toContain('Delivered');
      expect(await page.locator('h1').textContent()).toBe(tracker.name);
      await fitsThePhone(page);

      expect(requests.length).toBeGreaterThan(1);
      expect(requests.filter((url) => !url.startsWith(`${base}/`))).toEqual([]);
      expect(complaints).toEqual([]);

      mkdirSync(ARTIFACTS, { recursive: true });
      const screenshot = join(ARTIFACTS, 'share-link-page-phone.png');
      await page.screenshot({ path: screenshot, fullPage: true });
      console.log(`[artifact] public tracking page screenshot: ${screenshot}`);
    } finally {
      await page.close();
    }
  });

  it('shows the arrival estimate of a tracker on its way, from the client’s delivered journeys', async () => {
    const now = Date.now();
    const DAY = 24 * HOUR;
    // Five journeys to the destination, delivered 30..70 h after they left, all longer than this one's 10 h.
    for (const [i, hours] of [30, 40, 50, 60, 70].entries())
      await backdatedTracker(
        t,
        w.runA.id,
        [
          ['CREATED', (20 + i) * DAY + HOUR],
          ['IN_TRANSIT', (20 + i) * DAY],
          ['DELIVERED', (20 + i) * DAY - hours * HOUR, w.delivery.id],
        ],
        { now },
      );
    const onItsWay = await backdatedTracker(
      t,
      w.runA.id,
      [
        ['CREATED', 11 * HOUR],
        ['IN_TRANSIT', 10 * HOUR],
      ],
      { destination: w.delivery.id, now },
    );
    const { eta } = (await t.http().get(`/api/v1/trackers/${onItsWay}`).set(w.admin.auth).expect(200)).body;
    expect(eta).toMatchObject({ basis: 'destination', sample_size: 5 });
    expect(eta.expected_at).toBe(new Date(now - 10 * HOUR + 50 * HOUR).toISOString());

    const link = await createLink('exact', onItsWay);
    const { page, complaints } = await phonePage();
    try {
      expect((await page.goto(`${base}${link.url_path}`))?.status()).toBe(200);
      const line = page.locator('p.eta');
      expect(await line.isVisible()).toBe(true);
      const shown = (await line.textContent()) ?? '';
      expect(shown).toContain(`Expected arrival: ${eta.expected_at.slice(0, 16).replace('T', ' ')} UTC`);
      expect(shown).toContain(`at the latest ${eta.latest_at.slice(0, 16).replace('T', ' ')} UTC`);
      const times = line.locator('time');
      expect([await times.nth(0).getAttribute('datetime'), await times.nth(1).getAttribute('datetime')]).toEqual([
        eta.expected_at,
        eta.latest_at,
      ]);
      expect(await page.locator('#timeline li').count()).toBe(2);
      expect(complaints).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a `none` link shows the timeline and no map', async () => {
    const link = await createLink('none');
    const { page, complaints } = await phonePage();
    try {
      expect((await page.goto(`${base}${link.url_path}`))?.status()).toBe(200);
      expect(await page.locator('#timeline li').count()).toBeGreaterThan(0);
      await page.locator('#map[hidden]').waitFor({ state: 'attached' });
      expect(await page.locator('#map.leaflet-container').count()).toBe(0);
      expect(await page.locator('path').count()).toBe(0);
      expect(complaints).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('with MAP_TILE_URL the map loads tiles from that server, on every subdomain of `{s}`, and from no other', async () => {
    const tiles: string[] = [];
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const hosts = new Set<string>();
    const tileServer = http.createServer((req, res) => {
      tiles.push(req.url ?? '');
      hosts.add(req.headers.host ?? '');
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(png);
    });
    // The browser resolves a.localhost, b.localhost… to loopback itself: three origins, one server.
    await new Promise<void>((resolve) => tileServer.listen(0, '127.0.0.1', resolve));
    const port = (tileServer.address() as AddressInfo).port;
    const tileOrigins = ['a', 'b', 'c'].map((s) => `http://${s}.localhost:${port}`);
    const withTiles = await createPeerApp(t, {
      env: { MAP_TILE_URL: `http://{s}.localhost:${port}/{z}/{x}/{y}.png` },
    });
    try {
      await withTiles.app.listen(0, '127.0.0.1');
      const tilesBase = `http://127.0.0.1:${(withTiles.app.getHttpServer().address() as AddressInfo).port}`;
      const link = await createLink();
      const { page, requests, complaints } = await phonePage();
      try {
        const response = await page.goto(`${tilesBase}${link.url_path}`);
        expect(response?.headers()['content-security-policy']).toContain(
          `img-src 'self' data: ${tileOrigins.join(' ')};`,
        );
        await page.locator('img.leaflet-tile-loaded').first().waitFor({ state: 'attached' });
        expect(tiles.length).toBeGreaterThan(0);
        expect(tiles.every((url) => /^\/\d+\/\d+\/\d+\.png$/.test(url))).toBe(true);
        // Leaflet takes turns over the subdomains; the CSP lets every one through (a refusal is a console error).
        await page.waitForLoadState('networkidle');
        expect([...hosts].sort()).toEqual(tileOrigins.map((origin) => origin.slice('http://'.length)));
        expect(
          requests.filter(
            (url) => !url.startsWith(`${tilesBase}/`) && !tileOrigins.some((o) => url.startsWith(`${o}/`)),
          ),
        ).toEqual([]);
        expect(complaints).toEqual([]);
      } finally {
        await page.close();
      }
    } finally {
      await closeApps(withTiles);
      await new Promise((resolve) => tileServer.close(resolve));
    }
  });

  it('a revoked link shows the plain 404 page', async () => {
    const link = await createLink();
    await t.http().delete(`/api/v1/share-links/${link.id}`).set(w.userA.auth).expect(200);
    const { page, complaints } = await phonePage();
    try {
      const response = await page.goto(`${base}${link.url_path}`);
      expect(response?.status()).toBe(404);
      expect(await page.locator('h1').textContent()).toBe('Link not found');
      expect(await page.locator('#map').count()).toBe(0);
      expect(complaints.filter((c) => !c.includes('404'))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
