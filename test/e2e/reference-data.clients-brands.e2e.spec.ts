import { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

/** /clients and /brands — CRUD, filters, pagination, scoping, roles, 404/409/422. */
describe('Reference data: clients and brands', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let ingest: CreatedUser;
  // A user of client A only; client B is invisible to them.
  let userA: CreatedUser;
  let clientA: { id: number; name: string };
  let clientB: { id: number; name: string };

  beforeAll(async () => {
    ({ t, user: admin } = await createTestAppWithUser('admin'));
    ingest = await t.factories.ingest();
    clientA = await t.factories.client('Alpha Logistics');
    clientB = await t.factories.client('Beta Foods');
    userA = await t.factories.user({ clients: [clientA.id] });
  });
  afterAll(() => t.close());

  describe('/clients', () => {
    it('creates a client (201, trimmed name) and stores it', async () => {
      const res = await t
        .http()
        .post('/api/v1/clients')
        .set(admin.auth)
        .send({ name: '  Gamma Devices  ' })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Gamma Devices',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const [row] = await t.db.query('SELECT name FROM clients WHERE id = $1', [res.body.id]);
      expect(row.name).toBe('Gamma Devices');
    });

    it('rejects a duplicate name, case-insensitively, with 409', async () => {
      const res = await t.http().post('/api/v1/clients').set(admin.auth).send({ name: 'alpha LOGISTICS' }).expect(409);
      expect(res.body).toEqual({ detail: "Client 'alpha LOGISTICS' already exists" });
    });

    it('rejects bad bodies with 422', async () => {
      for (const body of [
        {},
        { name: '' },
        { name: '   ' },
        { name: 12 },
        { name: 'x'.repeat(256) },
        { name: 'ok', extra: 1 },
      ]) {
        const res = await t.http().post('/api/v1/clients').set(admin.auth).send(body).expect(422);
        expect(res.body.detail).toMatch(/^Validation failed: /);
      }
    });

    it('lists clients as a Page with name filter and pagination', async () => {
      const all = await t.http().get('/api/v1/clients').set(admin.auth).expect(200);
      expect(all.body).toMatchObject({ total: 3, page: 1, size: 50, pages: 1 });
      expect(all.body.items.map((c: { name: string }) => c.name)).toEqual([
        'Alpha Logistics',
        'Beta Foods',
        'Gamma Devices',
      ]);

      const filtered = await t.http().get('/api/v1/clients?name=FOOD').set(admin.auth).expect(200);
      expect(filtered.body.items.map((c: { id: number }) => c.id)).toEqual([clientB.id]);
      expect(filtered.body.total).toBe(1);

      const literal = await t.http().get('/api/v1/clients?name=%25').set(admin.auth).expect(200);
      expect(literal.body.total).toBe(0); // '%' is a literal, not a wildcard

      const page2 = await t.http().get('/api/v1/clients?skip=1&limit=1').set(admin.auth).expect(200);
      expect(page2.body).toMatchObject({ total: 3, page: 2, size: 1, pages: 3 });
      expect(page2.body.items.map((c: { name: string }) => c.name)).toEqual(['Beta Foods']);

      const past = await t.http().get('/api/v1/clients?skip=10').set(admin.auth).expect(200);
      expect(past.body).toMatchObject({ items: [], total: 3 });

      await t.http().get('/api/v1/clients?limit=0').set(admin.auth).expect(422);
      await t.http().get('/api/v1/clients?limit=1001').set(admin.auth).expect(422);
      await t.http().get('/api/v1/clients?skip=-1').set(admin.auth).expect(422);
    });

    it("scopes reads to the user's client_list; invisible answers like missing", async () => {
      const list = await t.http().get('/api/v1/clients').set(userA.auth).expect(200);
      expect(list.body.items.map((c: { id: number }) => c.id)).toEqual([clientA.id]);
      expect(list.body.total).toBe(1);

      const own = await t.http().get(`/api/v1/clients/${clientA.id}`).set(userA.auth).expect(200);
      expect(own.body).toMatchObject({ id: clientA.id, name: 'Alpha Logistics' });

      const other = await t.http().get(`/api/v1/clients/${clientB.id}`).set(userA.auth).expect(404);
      expect(other.body).toEqual({ detail: 'Client not found' });
      const missing = await t.http().get('/api/v1/clients/999999').set(userA.auth).expect(404);
      expect(missing.body).toEqual({ detail: 'Client not found' });
    });

    it('enforces roles: user cannot write, ingest cannot read', async () => {
      const denied = { detail: 'Not enough permissions' };
      expect((await t.http().post('/api/v1/clients').set(userA.auth).send({ name: 'Nope' }).expect(403)).body).toEqual(
        denied,
      );
      await t.http().put(`/api/v1/clients/${clientA.id}`).set(userA.auth).send({ name: 'Nope' }).expect(403);
      await t.http().delete(`/api/v1/clients/${clientA.id}`).set(userA.auth).expect(403);
      expect((await t.http().get('/api/v1/clients').set(ingest.auth).expect(403)).body).toEqual(denied);
      await t.http().get(`/api/v1/clients/${clientA.id}`).set(ingest.auth).expect(403);
      await t.http().get('/api/v1/clients').expect(401);
      const [row] = await t.db.query('SELECT count(*)::int AS n FROM clients WHERE name = $1', ['Nope']);
      expect(row.n).toBe(0);
    });

    it('validates path ids with 422', async () => {
      for (const id of ['abc', '0', '-1', '1.5', '99999999999']) {
        const res = await t.http().get(`/api/v1/clients/${id}`).set(admin.auth).expect(422);
        expect(res.body.errors[0].field).toBe('id');
      }
    });

    it('updates a client (partial PUT) and refuses a name used by another client', async () => {
      const created = await t.factories.client('Delta Old');
      const res = await t
        .http()
        .put(`/api/v1/clients/${created.id}`)
        .set(admin.auth)
        .send({ name: 'Delta New' })
        .expect(200);
      expect(res.body).toMatchObject({ id: created.id, name: 'Delta New' });
      const [row] = await t.db.query('SELECT name, updated_at > created_at AS touched FROM clients WHERE id = $1', [
        created.id,
      ]);
      expect(row).toEqual({ name: 'Delta New', touched: true });

      // Empty body: nothing changes. Same name in another case: allowed for itself.
      await t.http().put(`/api/v1/clients/${created.id}`).set(admin.auth).send({}).expect(200);
      await t.http().put(`/api/v1/clients/${created.id}`).set(admin.auth).send({ name: 'DELTA NEW' }).expect(200);

      const dup = await t
        .http()
        .put(`/api/v1/clients/${created.id}`)
        .set(admin.auth)
        .send({ name: 'beta foods' })
        .expect(409);
      expect(dup.body).toEqual({ detail: "Client 'beta foods' already exists" });
      await t.http().put(`/api/v1/clients/${created.id}`).set(admin.auth).send({ name: null }).expect(422);
      const missing = await t.http().put('/api/v1/clients/999999').set(admin.auth).send({ name: 'X' }).expect(404);
      expect(missing.body).toEqual({ detail: 'Client not found' });
    });

    it('deletes an unreferenced client (200 with it) and refuses a referenced one (409)', async () => {
      const lonely = await t.factories.client('Epsilon');
      const res = await t.http().delete(`/api/v1/clients/${lonely.id}`).set(admin.auth).expect(200);
      expect(res.body).toMatchObject({ id: lonely.id, name: 'Epsilon' });
      expect(await t.db.query('SELECT id FROM clients WHERE id = $1', [lonely.id])).toEqual([]);
      await t.http().delete(`/api/v1/clients/${lonely.id}`).set(admin.auth).expect(404);

      const used = await t.factories.client('Zeta');
      await t.factories.brand(used.id);
      const conflict = await t.http().delete(`/api/v1/clients/${used.id}`).set(admin.auth).expect(409);
      expect(conflict.body).toEqual({ detail: 'Client is still referenced by brands' });
      expect(await t.db.query('SELECT id FROM clients WHERE id = $1', [used.id])).toHaveLength(1);
    });
  });

  describe('/brands', () => {
    let brandA1: { id: number; name: string };
    let brandA2: { id: number; name: string };
    let brandB: { id: number; name: string };

    beforeAll(async () => {
      brandA1 = await t.factories.brand(clientA.id, 'Alpha Premium');
      brandA2 = await t.factories.brand(clientA.id, 'Alpha Basic');
      brandB = await t.factories.brand(clientB.id, 'Beta Premium');
    });

    it('creates a brand (201) and stores it', async () => {
      const res = await t
        .http()
        .post('/api/v1/brands')
        .set(admin.auth)
        .send({ name: ' Beta Basic ', client_id: clientB.id })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'Beta Basic',
        client_id: clientB.id,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
      });
      const [row] = await t.db.query('SELECT name, client_id FROM brands WHERE id = $1', [res.body.id]);
      expect(row).toEqual({ name: 'Beta Basic', client_id: clientB.id });
    });

    it('allows the same name under another client but not twice under one (409)', async () => {
      await t
        .http()
        .post('/api/v1/brands')
        .set(admin.auth)
        .send({ name: 'Alpha Premium', client_id: clientB.id })
        .expect(201);
      const dup = await t
        .http()
        .post('/api/v1/brands')
        .set(admin.auth)
        .send({ name: 'ALPHA premium', client_id: clientA.id })
        .expect(409);
      expect(dup.body).toEqual({ detail: `Brand 'ALPHA premium' already exists for client ${clientA.id}` });
    });

    it('rejects an unknown client and bad bodies with 422', async () => {
      const unknown = await t
        .http()
        .post('/api/v1/brands')
        .set(admin.auth)
        .send({ name: 'X', client_id: 999999 })
        .expect(422);
      expect(unknown.body).toEqual({
        detail: 'Validation failed: client_id: client does not exist',
        errors: [{ field: 'client_id', message: 'client does not exist' }],
      });
      for (const body of [
        { name: 'X' },
        { client_id: clientA.id },
        { name: 'X', client_id: '1' },
        { name: 'X', client_id: 0 },
      ]) {
        await t.http().post('/api/v1/brands').set(admin.auth).send(body).expect(422);
      }
    });

    it('lists brands with client_id and name filters and pagination', async () => {
      const byClient = await t.http().get(`/api/v1/brands?client_id=${clientA.id}`).set(admin.auth).expect(200);
      expect(byClient.body.items.map((b: { id: number }) => b.id)).toEqual([brandA1.id, brandA2.id]);
      expect(byClient.body).toMatchObject({ total: 2, pages: 1 });

      const byName = await t.http().get('/api/v1/brands?name=premium').set(admin.auth).expect(200);
      expect(byName.body.items.map((b: { name: string }) => b.name)).toEqual([
        'Alpha Premium',
        'Beta Premium',
        'Alpha Premium',
      ]);

      const both = await t
        .http()
        .get(`/api/v1/brands?name=premium&client_id=${clientB.id}`)
        .set(admin.auth)
        .expect(200);
      expect(both.body.items.every((b: { client_id: number }) => b.client_id === clientB.id)).toBe(true);
      expect(both.body.total).toBe(2);

      const paged = await t.http().get('/api/v1/brands?limit=2&skip=2').set(admin.auth).expect(200);
      expect(paged.body).toMatchObject({ page: 2, size: 2 });
      expect(paged.body.items).toHaveLength(2);

      await t.http().get('/api/v1/brands?client_id=abc').set(admin.auth).expect(422);
      await t.http().get('/api/v1/brands?client_id=0').set(admin.auth).expect(422);
      await t.http().get('/api/v1/brands?unknown=1').set(admin.auth).expect(422);
    });

    it("scopes brands to the user's clients", async () => {
      const list = await t.http().get('/api/v1/brands').set(userA.auth).expect(200);
      expect(list.body.items.map((b: { id: number }) => b.id)).toEqual([brandA1.id, brandA2.id]);
      const filteredToB = await t.http().get(`/api/v1/brands?client_id=${clientB.id}`).set(userA.auth).expect(200);
      expect(filteredToB.body).toMatchObject({ items: [], total: 0, pages: 0 });
      await t.http().get(`/api/v1/brands/${brandA1.id}`).set(userA.auth).expect(200);
      const hidden = await t.http().get(`/api/v1/brands/${brandB.id}`).set(userA.auth).expect(404);
      expect(hidden.body).toEqual({ detail: 'Brand not found' });
      expect((await t.http().get('/api/v1/brands/999999').set(userA.auth).expect(404)).body).toEqual({
        detail: 'Brand not found',
      });
    });

    it('enforces roles', async () => {
      await t.http().post('/api/v1/brands').set(userA.auth).send({ name: 'Nope', client_id: clientA.id }).expect(403);
      await t.http().put(`/api/v1/brands/${brandA1.id}`).set(userA.auth).send({ name: 'Nope' }).expect(403);
      await t.http().delete(`/api/v1/brands/${brandA1.id}`).set(userA.auth).expect(403);
      await t.http().get('/api/v1/brands').set(ingest.auth).expect(403);
      await t.http().get(`/api/v1/brands/${brandA1.id}`).set(ingest.auth).expect(403);
      await t.http().get('/api/v1/brands/abc').set(admin.auth).expect(422);
    });

    it('updates a brand; moving it to another client moves its runs into that scope', async () => {
      const brand = await t.factories.brand(clientA.id, 'Mover');
      const run = await t.factories.run({ brandId: brand.id });
      await t.http().get(`/api/v1/production-runs/${run.id}`).set(userA.auth).expect(200);

      const renamed = await t
        .http()
        .put(`/api/v1/brands/${brand.id}`)
        .set(admin.auth)
        .send({ name: 'Mover 2' })
        .expect(200);
      expect(renamed.body).toMatchObject({ id: brand.id, name: 'Mover 2', client_id: clientA.id });

      const cache = t.app.get(CacheService);
      const before = await cache.generations(['trackers', `analytics:run:${run.id}`]);
      const moved = await t
        .http()
        .put(`/api/v1/brands/${brand.id}`)
        .set(admin.auth)
        .send({ client_id: clientB.id })
        .expect(200);
      const after = await cache.generations(['trackers', `analytics:run:${run.id}`]);
      expect(after[0]).not.toBe(before[0]);
      expect(after[1]).not.toBe(before[1]);
      expect(moved.body).toMatchObject({ name: 'Mover 2', client_id: clientB.id });
      const [row] = await t.db.query('SELECT client_id FROM production_runs WHERE id = $1', [run.id]);
      expect(row.client_id).toBe(clientB.id);
      await t.http().get(`/api/v1/production-runs/${run.id}`).set(userA.auth).expect(404);
      await t.http().get(`/api/v1/brands/${brand.id}`).set(userA.auth).expect(404);

      // Moving into a client that already has the name → 409; to an unknown client → 422.
      const dup = await t
        .http()
        .put(`/api/v1/brands/${brand.id}`)
        .set(admin.auth)
        .send({ name: 'Beta Premium' })
        .expect(409);
      expect(dup.body).toEqual({ detail: `Brand 'Beta Premium' already exists for client ${clientB.id}` });
      await t.http().put(`/api/v1/brands/${brand.id}`).set(admin.auth).send({ client_id: 999999 }).expect(422);
      await t.http().put(`/api/v1/brands/${brand.id}`).set(admin.auth).send({ client_id: null }).expect(422);
      expect((await t.http().put('/api/v1/brands/999999').set(admin.auth).send({}).expect(404)).body).toEqual({
        detail: 'Brand not found',
      });
    });

    it('deletes an unreferenced brand and refuses one with runs (409)', async () => {
      const lonely = await t.factories.brand(clientA.id, 'Lonely');
      const res = await t.http().delete(`/api/v1/brands/${lonely.id}`).set(admin.auth).expect(200);
      expect(res.body).toMatchObject({ id: lonely.id, name: 'Lonely', client_id: clientA.id });
      expect(await t.db.query('SELECT id FROM brands WHERE id = $1', [lonely.id])).toEqual([]);

      await t.factories.run({ brandId: brandA2.id });
      const conflict = await t.http().delete(`/api/v1/brands/${brandA2.id}`).set(admin.auth).expect(409);
      expect(conflict.body).toEqual({ detail: 'Brand is still referenced by production runs' });
      expect(await t.db.query('SELECT id FROM brands WHERE id = $1', [brandA2.id])).toHaveLength(1);
      await t.http().delete('/api/v1/brands/999999').set(admin.auth).expect(404);
    });
  });

  it('documents every reference-data route in OpenAPI', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    for (const resource of ['clients', 'brands', 'production-runs', 'storage-locations', 'delivery-locations']) {
      const list = doc.paths[`/api/v1/${resource}`];
      const item = doc.paths[`/api/v1/${resource}/{id}`];
      expect(Object.keys(list.get.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '422']));
      expect(list.get.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['skip', 'limit']),
      );
      expect(Object.keys(list.post.responses)).toEqual(expect.arrayContaining(['201', '422']));
      expect(Object.keys(item.get.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
      expect(Object.keys(item.put.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
      expect(Object.keys(item.delete.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
    }
  });
});
