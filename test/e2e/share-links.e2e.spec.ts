import { createHash } from 'node:crypto';
import { createKey, xApiKey } from '../support/api-keys.js';
import { closeApps, createPeerApp, type TestApp } from '../support/app.js';
import { withinBound } from '../support/eventually.js';
import { createPlace } from '../support/geofences.js';
import { postReports, report } from '../support/locations.js';
import { createTrackerWorld, TRACKERS, type TrackerWorld } from '../support/trackers.js';

/**
 * Share links: creation (token once, hash at rest), listing, revocation, and the public JSON view at
 * each location precision — checked against a whitelist of fields, so a new field fails here.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PUBLIC = '/api/v1/public/track';
// The per-IP limit is exercised in share-links-public.e2e.spec.ts; here it stays out of the way.
const ENV = { PUBLIC_TRACK_REQUESTS_PER_MINUTE: '100000' };

const VIEW_FIELDS = [
  'destination_name',
  'eta',
  'expires_at',
  'latest_location',
  'status',
  'status_history',
  'tracker_name',
];
const ENTRY_FIELDS = ['location_name', 'status', 'timestamp'];
const LOCATION_FIELDS = ['latitude', 'longitude', 'timestamp'];
const ETA_FIELDS = ['basis', 'expected_at', 'latest_at', 'sample_size'];

describe('Share links', () => {
  let t: TestApp;
  let w: TrackerWorld;
  let trackerId: number;
  let store: { id: number; name: string };
  let dest: { id: number; name: string };
  const now = Date.now();
  let seq = 0;

  /** A tracker of `runId` with back-dated entries `[status, ms ago, storage?, delivery?]`. */
  async function tracker(runId: number, entries: [string, number, number?, number?][], destination?: number) {
    const [{ id }] = (await t.db.query(
      `INSERT INTO trackers (name, production_run_id, delivery_location_id, notes) VALUES ($1, $2, $3, 'private note') RETURNING id`,
      [`share-${++seq}`, runId, destination ?? null],
    )) as { id: number }[];
    for (const [status, ago, storage, delivery] of entries)
      await t.db.query(
        `INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [id, status, new Date(now - ago), storage ?? null, delivery ?? null],
      );
    await t.db.query('SELECT trackers_follow_latest_entry(ARRAY[$1]::int[])', [id]);
    return id;
  }

  const create = (body: object = {}, id = trackerId, auth: Record<string, string> = w.userA.auth) =>
    t.http().post(`${TRACKERS}/${id}/share-links`).set(auth).send(body);

  beforeAll(async () => {
    ({ t, w } = await createTrackerWorld({ env: ENV }));
    store = await createPlace(t, w.admin.auth, 'storage', { latitude: 48.137, longitude: 11.575 });
    dest = await createPlace(t, w.admin.auth, 'delivery', { latitude: 50.111, longitude: 8.682 });
    trackerId = await tracker(
      w.runA.id,
      [
        ['CREATED', 3 * DAY],
        ['IN_TRANSIT', 2 * DAY],
        ['IN_STORAGE', DAY, store.id],
        ['IN_TRANSIT', 12 * HOUR],
      ],
      dest.id,
    );
    // Five delivered journeys of the same client to the same destination: an arrival estimate.
    for (const days of [5, 6, 7, 8, 9])
      await tracker(
        w.runA.id,
        [
          ['CREATED', 30 * DAY],
          ['IN_TRANSIT', 29 * DAY],
          ['DELIVERED', (29 - days) * DAY, undefined, dest.id],
        ],
        dest.id,
      );
    const reports = [
      report(trackerId, new Date(now - 2 * HOUR).toISOString(), { latitude: 49.01234, longitude: 9.98765 }),
    ];
    expect((await postReports(t, w.ingest, reports)).status).toBe(200);
  });
  afterAll(() => t.close());

  it('creates a link: the token (256 bits) and url_path shown once, only its hash stored', async () => {
    const res = await create({ location_precision: 'exact' }).expect(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      tracker_id: trackerId,
      url_path: `/track/${res.body.token}`,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
      location_precision: 'exact',
      created_by: w.userA.id,
      created_at: expect.any(String),
      revoked_at: null,
    });
    const lifetime = Date.parse(res.body.expires_at) - Date.parse(res.body.created_at);
    expect(Math.abs(lifetime - 7 * DAY)).toBeLessThan(60_000);
    const [row] = await t.db.query(
      `SELECT token_hash, to_jsonb(s)::text AS everything FROM share_links s WHERE id = $1`,
      [res.body.id],
    );
    expect(row.token_hash).toEqual(createHash('sha256').update(res.body.token).digest());
    expect(row.everything).not.toContain(res.body.token);
    expect((await create().expect(201)).body.location_precision).toBe('approximate');
  });

  it('refuses expires_at in the past or beyond 90 days, an unknown precision, and invisible trackers', async () => {
    const cases: [object, string][] = [
      [{ expires_at: new Date(now - 1000).toISOString() }, 'expires_at: must be in the future'],
      [{ expires_at: new Date(Date.now() + 91 * DAY).toISOString() }, 'expires_at: must be at most 90 days ahead'],
      [{ location_precision: 'street' }, 'location_precision: must be one of exact, approximate, none'],
    ];
    for (const [body, detail] of cases)
      expect((await create(body).expect(422)).body.detail).toBe(`Validation failed: ${detail}`);
    await create({ expires_at: new Date(Date.now() + 89 * DAY).toISOString() }).expect(201);
    const theirs = await tracker(w.runB.id, [['CREATED', DAY]]);
    expect((await create({}, theirs).expect(404)).body).toEqual({ detail: 'Tracker not found' });
    await create({}, trackerId, w.ingest.auth).expect(403);
  });

  it("lists the caller's links (an admin's: all) without token or url_path; revokes idempotently", async () => {
    const mine = (await create().expect(201)).body;
    const admins = (await create({}, trackerId, w.admin.auth).expect(201)).body;
    const list = async (auth: { Authorization: string }) =>
      (await t.http().get(`${TRACKERS}/${trackerId}/share-links?limit=1000`).set(auth).expect(200)).body;
    const userPage = await list(w.userA.auth);
    expect(userPage.items.map((l: { id: number }) => l.id)).toContain(mine.id);
    expect(userPage.items.map((l: { id: number }) => l.id)).not.toContain(admins.id);
    expect(
      userPage.items.every((l: { token: unknown; url_path: unknown }) => l.token === null && l.url_path === null),
    ).toBe(true);
    expect((await list(w.admin.auth)).items.map((l: { id: number }) => l.id)).toEqual(
      expect.arrayContaining([mine.id, admins.id]),
    );

    const other = await t.factories.user({ clients: [w.clientA.id] });
    const denied = await t.http().delete(`/api/v1/share-links/${admins.id}`).set(w.userA.auth).expect(404);
    expect(denied.body).toEqual({ detail: 'Share link not found' });
    await t.http().delete(`/api/v1/share-links/${mine.id}`).set(other.auth).expect(404);
    const revoked = (await t.http().delete(`/api/v1/share-links/${mine.id}`).set(w.userA.auth).expect(200)).body;
    expect(revoked).toMatchObject({ id: mine.id, token: null, url_path: null, revoked_at: expect.any(String) });
    const again = (await t.http().delete(`/api/v1/share-links/${mine.id}`).set(w.userA.auth).expect(200)).body;
    expect(again.revoked_at).toBe(revoked.revoked_at);
    await t.http().delete(`/api/v1/share-links/${admins.id}`).set(w.admin.auth).expect(200);
    expect((await list(w.userA.auth)).items.find((l: { id: number }) => l.id === mine.id).revoked_at).toBe(
      revoked.revoked_at,
    );
    await t.http().get(`${TRACKERS}/${2147483000}/share-links`).set(w.userA.auth).expect(404);
  });

  it('API keys: creating and revoking need `write`, listing `read`; a key narrowed to clients sees only theirs', async () => {
    const reader = xApiKey((await createKey(t, w.userA.auth, { name: 'r', scopes: ['read'] })).key);
    const writer = xApiKey((await createKey(t, w.userA.auth, { name: 'w', scopes: ['write'] })).key);
    const other = xApiKey(
      (await createKey(t, w.admin.auth, { name: 'b', scopes: ['read', 'write'], client_ids: [w.clientB.id] })).key,
    );
    await create({}, trackerId, reader).expect(403);
    const link = (await create({}, trackerId, writer).expect(201)).body;
    expect(link.created_by).toBe(w.userA.id);
    await t.http().get(`${TRACKERS}/${trackerId}/share-links`).set(reader).expect(200);
    await t.http().get(`${TRACKERS}/${trackerId}/share-links`).set(writer).expect(403);
    await t.http().delete(`/api/v1/share-links/${link.id}`).set(reader).expect(403);
    // An admin's key narrowed to client B: client A's tracker and its links do not exist for it.
    await create({}, trackerId, other).expect(404);
    await t.http().delete(`/api/v1/share-links/${link.id}`).set(other).expect(404);
    await t.http().delete(`/api/v1/share-links/${link.id}`).set(writer).expect(200);
  });

  it('the public view at each precision: whitelisted fields only, coordinates exact, rounded or absent', async () => {
    const detail = (await t.http().get(`${TRACKERS}/${trackerId}`).set(w.admin.auth).expect(200)).body;
    expect(detail.eta).not.toBeNull();
    const expected = {
      tracker_name: detail.name,
      status: 'IN_TRANSIT',
      destination_name: dest.name,
      status_history: [
        { status: 'CREATED', timestamp: new Date(now - 3 * DAY).toISOString(), location_name: null },
        { status: 'IN_TRANSIT', timestamp: new Date(now - 2 * DAY).toISOString(), location_name: null },
        { status: 'IN_STORAGE', timestamp: new Date(now - DAY).toISOString(), location_name: store.name },
        { status: 'IN_TRANSIT', timestamp: new Date(now - 12 * HOUR).toISOString(), location_name: null },
      ],
      eta: detail.eta,
    };
    const reportedAt = new Date(now - 2 * HOUR).toISOString();
    const locations = {
      exact: { latitude: 49.01234, longitude: 9.98765, timestamp: reportedAt },
      approximate: { latitude: 49.01, longitude: 9.99, timestamp: reportedAt },
      none: null,
    };
    for (const precision of ['exact', 'approximate', 'none'] as const) {
      const link = (await create({ location_precision: precision }).expect(201)).body;
      const res = await t.http().get(`${PUBLIC}/${link.token}`).expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.body).toEqual({ ...expected, latest_location: locations[precision], expires_at: link.expires_at });
      expect(Object.keys(res.body).sort()).toEqual(VIEW_FIELDS);
      for (const entry of res.body.status_history) expect(Object.keys(entry).sort()).toEqual(ENTRY_FIELDS);
      if (res.body.latest_location) expect(Object.keys(res.body.latest_location).sort()).toEqual(LOCATION_FIELDS);
      expect(Object.keys(res.body.eta).sort()).toEqual(ETA_FIELDS);
      expect(JSON.stringify(res.body)).not.toContain('private note');
    }
  });

  it('unknown, malformed, expired, revoked and deleted-tracker links answer 404 with no-store and no-referrer', async () => {
    const expired = (await create().expect(201)).body;
    await t.db.query(`UPDATE share_links SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const revoked = (await create().expect(201)).body;
    await t.http().delete(`/api/v1/share-links/${revoked.id}`).set(w.userA.auth).expect(200);
    const doomed = await tracker(w.runA.id, [['CREATED', DAY]]);
    const gone = (await create({}, doomed).expect(201)).body;
    await t.http().get(`${PUBLIC}/${gone.token}`).expect(200);
    await t.http().delete(`${TRACKERS}/${doomed}`).set(w.admin.auth).expect(200);
    const tokens = [expired.token, revoked.token, gone.token, 'A'.repeat(43), 'short', `${'b'.repeat(43)}x`];
    for (const token of tokens) {
      const res = await withinBound(
        () => t.http().get(`${PUBLIC}/${token}`),
        (r) => r.status === 404,
      );
      expect([token, res.status, res.body]).toEqual([token, 404, { detail: 'Share link not found' }]);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
  });

  it('a link revoked on one instance (or by hand in the database) answers 404 on every instance within 1 s', async () => {
    const b = await createPeerApp(t, { env: ENV });
    try {
      const link = (await create().expect(201)).body;
      await b.http().get(`${PUBLIC}/${link.token}`).expect(200); // now cached on B
      await t.http().delete(`/api/v1/share-links/${link.id}`).set(w.userA.auth).expect(200);
      await t.http().get(`${PUBLIC}/${link.token}`).expect(404);
      // withinBound reads until the answer changes or the bound has passed: the last reading is the verdict.
      const onB = await withinBound(
        () => b.http().get(`${PUBLIC}/${link.token}`),
        (res) => res.status === 404,
      );
      expect(onB.status).toBe(404);

      // Revoked by hand in the database, after both instances cached it: the trigger tells both.
      const byHand = (await create().expect(201)).body;
      await t.http().get(`${PUBLIC}/${byHand.token}`).expect(200);
      await b.http().get(`${PUBLIC}/${byHand.token}`).expect(200);
      await t.db.query('UPDATE share_links SET revoked_at = now() WHERE id = $1', [byHand.id]);
      for (const app of [t, b]) {
        const res = await withinBound(
          () => app.http().get(`${PUBLIC}/${byHand.token}`),
          (r) => r.status === 404,
        );
        expect(res.status).toBe(404);
      }
    } finally {
      await closeApps(b);
    }
  });
});
