import { closeApps, createTestApp, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { MaintenanceService } from '../../src/maintenance/maintenance.service.js';
import { WebhooksService } from '../../src/webhooks/webhooks.service.js';
import type { AuthUser } from '../../src/common/auth/auth-user.js';
import { createWebhook, WEBHOOKS } from '../support/webhooks.js';

const URL_OK = 'http://127.0.0.1:9/hook';
const STATUS = ['tracker.status_changed'];

/** The webhook routes: ownership, the secret shown twice only, the delivery log's routes, and every bad input. */
describe('webhooks: routes', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let user: CreatedUser;
  let stranger: CreatedUser;
  let clientA: number;
  let clientB: number;

  beforeAll(async () => {
    t = await createTestApp();
    clientA = (await t.factories.client()).id;
    clientB = (await t.factories.client()).id;
    admin = await t.factories.admin();
    user = await t.factories.user({ clients: [clientA] });
    stranger = await t.factories.user({ clients: [clientA] });
  });
  afterAll(() => closeApps(t));

  const post = (as: CreatedUser, body: object) => t.http().post(WEBHOOKS).set(as.auth).send(body);
  const invalid = (field: string, message: string) => ({
    detail: `Validation failed: ${field}: ${message}`,
    errors: [{ field, message }],
  });

  it("creates, lists, reads, changes and deletes the caller's webhooks; the secret is answered at creation and rotation only", async () => {
    const created = await post(user, { url: URL_OK, event_types: STATUS, description: 'ERP', client_ids: [clientA] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      user_id: user.id,
      url: URL_OK,
      event_types: STATUS,
      client_ids: [clientA],
      description: 'ERP',
      is_active: true,
      disabled_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);
    const id = created.body.id;
    const { secret: _secret, ...shown } = created.body;
    expect((await t.http().get(`${WEBHOOKS}/${id}`).set(user.auth).expect(200)).body).toEqual(shown);
    const list = await t.http().get(WEBHOOKS).set(user.auth).expect(200);
    expect(list.body).toEqual({ items: [shown], total: 1, page: 1, size: 50, pages: 1 });
    expect((await t.http().get(WEBHOOKS).set(admin.auth).expect(200)).body.items).toContainEqual(shown);

    const patched = await t
      .http()
      .patch(`${WEBHOOKS}/${id}`)
      .set(user.auth)
      .send({
        url: 'http://127.0.0.1:9/other',
        event_types: ['tracker.alert_opened', 'tracker.alert_resolved'],
        description: null,
        is_active: false,
      });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'http://127.0.0.1:9/other',
      event_types: ['tracker.alert_opened', 'tracker.alert_resolved'],
      description: null,
      is_active: false,
      disabled_reason: 'Disabled through the API',
    });
    expect(patched.body.secret).toBeUndefined();
    const enabled = await t.http().patch(`${WEBHOOKS}/${id}`).set(user.auth).send({ is_active: true }).expect(200);
    expect(enabled.body).toMatchObject({ is_active: true, disabled_reason: null });

    const rotated = await t.http().post(`${WEBHOOKS}/${id}/rotate-secret`).set(user.auth).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);

    const test = await t.http().post(`${WEBHOOKS}/${id}/test`).set(user.auth).expect(202);
    expect(test.body).toEqual({
      id: expect.any(Number),
      webhook_id: id,
      event_type: 'webhook.test',
      event_id: null,
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      next_attempt_at: expect.any(String),
      response_status: null,
      response_time_ms: null,
      error: null,
    });
    const deleted = await t.http().delete(`${WEBHOOKS}/${id}`).set(user.auth).expect(200);
    expect(deleted.body).toMatchObject({ id, is_active: true });
    await t.http().get(`${WEBHOOKS}/${id}`).set(user.auth).expect(404);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [id])).toEqual([
      { n: 0 },
    ]);
  });

  it("another user's webhook and a delivery of another webhook answer 404 like missing ones; an admin reaches every webhook", async () => {
    const hook = await createWebhook(t, user, { url: URL_OK });
    const other = await createWebhook(t, stranger, { url: URL_OK });
    const delivery = (await t.http().post(`${WEBHOOKS}/${other.id}/test`).set(stranger.auth).expect(202)).body;
    const notFound = { detail: 'Webhook not found' };
    for (const [method, path] of [
      ['get', `${WEBHOOKS}/${hook.id}`],
      ['patch', `${WEBHOOKS}/${hook.id}`],
      ['delete', `${WEBHOOKS}/${hook.id}`],
      ['post', `${WEBHOOKS}/${hook.id}/rotate-secret`],
      ['post', `${WEBHOOKS}/${hook.id}/test`],
      ['get', `${WEBHOOKS}/${hook.id}/deliveries`],
      ['post', `${WEBHOOKS}/${hook.id}/deliveries/${delivery.id}/retry`],
      ['get', `${WEBHOOKS}/2147483000`],
    ] as const) {
      const res = await t.http()[method](path).set(stranger.auth).send({ description: 'x' });
      expect([method, path, res.status, res.body]).toEqual([method, path, 404, notFound]);
    }
    const wrong = await t.http().post(`${WEBHOOKS}/${hook.id}/deliveries/${delivery.id}/retry`).set(user.auth);
    expect([wrong.status, wrong.body]).toEqual([404, { detail: 'Delivery not found' }]);
    await t.http().get(`${WEBHOOKS}/${hook.id}`).set(admin.auth).expect(200);
    const log = await t.http().get(`${WEBHOOKS}/${other.id}/deliveries?status=pending`).set(admin.auth).expect(200);
    expect(log.body.items.map((d: { id: number }) => d.id)).toContain(delivery.id);
    expect(
      (await t.http().get(`${WEBHOOKS}/${other.id}/deliveries?status=succeeded`).set(admin.auth).expect(200)).body
        .total,
    ).toBe(0);
  });

  it('deletes deliveries older than NOTIFICATION_RETENTION_DAYS', async () => {
    const hook = await createWebhook(t, user, { url: URL_OK });
    await t.db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_type, status, created_at, next_attempt_at)
       VALUES ($1, 'webhook.test', 'succeeded', now() - interval '91 days', now()), ($1, 'webhook.test', 'succeeded', now() - interval '89 days', now())`,
      [hook.id],
    );
    expect(await t.app.get(MaintenanceService).runOnce()).toMatchObject({ ran: true, webhookDeliveriesPurged: 1 });
    const log = await t.http().get(`${WEBHOOKS}/${hook.id}/deliveries`).set(user.auth).expect(200);
    expect(log.body.total).toBe(1);
  });

  it('refuses every bad input with 422 and a clear detail', async () => {
    const base = { url: URL_OK, event_types: STATUS };
    const cases: [object, string, string][] = [
      [{ ...base, url: 'http://user:pass@example.com/x' }, 'url', 'must not contain credentials (user@ or user:pass@)'],
      [{ ...base, url: 'https://user@example.com/x' }, 'url', 'must not contain credentials (user@ or user:pass@)'],
      [{ ...base, url: 'ftp://example.com/x' }, 'url', 'must be an http:// or https:// URL'],
      [{ ...base, url: 'javascript:alert(1)' }, 'url', 'must be an http:// or https:// URL'],
      [{ ...base, url: '/relative/path' }, 'url', 'must be an absolute URL (https://host/path)'],
      [{ ...base, url: `https://example.com/${'a'.repeat(2000)}` }, 'url', 'must be at most 2000 characters'],
      [{ ...base, url: 'https://exa mple.com/' }, 'url', 'must not contain white space'],
      [{ ...base, url: 42 }, 'url', 'url must be a string'],
      [{ event_types: STATUS }, 'url', 'url must be a string'],
      [{ ...base, event_types: [] }, 'event_types', 'event_types should not be empty'],
      [
        { ...base, event_types: ['tracker.exploded'] },
        'event_types',
        'must contain only tracker.status_changed, tracker.alert_opened, tracker.alert_resolved',
      ],
      [{ ...base, event_types: [...STATUS, ...STATUS] }, 'event_types', 'must not repeat an event type'],
      [
        { ...base, description: 'x'.repeat(501) },
        'description',
        'description must be shorter than or equal to 500 characters',
      ],
      [{ ...base, client_ids: [] }, 'client_ids', 'client_ids should not be empty'],
      [{ ...base, client_ids: [clientB] }, 'client_ids', `must be existing clients you can see (not: ${clientB})`],
      [{ ...base, client_ids: [2147483000] }, 'client_ids', 'must be existing clients you can see (not: 2147483000)'],
      [{ ...base, client_ids: ['1'] }, 'client_ids', 'must be a positive integer'],
      [{ ...base, secret: 'mine' }, 'secret', 'should not exist'],
    ];
    for (const [body, field, message] of cases) {
      const res = await post(user, body);
      const name = JSON.stringify(body).slice(0, 80);
      expect([name, res.status]).toEqual([name, 422]);
      expect([name, res.body.errors]).toEqual([name, expect.arrayContaining([{ field, message }])]);
      expect(res.body.detail).toContain(`${field}: ${message}`);
    }
    const hook = await createWebhook(t, user, { url: URL_OK });
    const patch = (body: object) => t.http().patch(`${WEBHOOKS}/${hook.id}`).set(user.auth).send(body);
    expect((await patch({ url: 'ftp://x' })).body).toEqual(invalid('url', 'must be an http:// or https:// URL'));
    expect((await patch({ is_active: null })).body).toEqual(invalid('is_active', 'is_active must be a boolean value'));
    expect((await patch({ client_ids: [clientA] })).body).toEqual(invalid('client_ids', 'should not exist'));
    expect((await t.http().get(`${WEBHOOKS}/0`).set(user.auth)).body).toEqual(
      invalid('id', 'must be a positive integer'),
    );
    expect((await t.http().get(`${WEBHOOKS}/${hook.id}/deliveries?status=lost`).set(user.auth)).body).toEqual(
      invalid('status', 'must be one of pending, succeeded, failed'),
    );
    expect((await t.http().post(`${WEBHOOKS}/${hook.id}/deliveries/x/retry`).set(user.auth)).body).toEqual(
      invalid('delivery_id', 'must be a positive integer'),
    );
    // An admin may narrow to any existing client.
    await createWebhook(t, admin, { url: URL_OK, client_ids: [clientB] });
  });

  it('an API key narrowed to clients creates only webhooks narrowed to a subset of its clients', async () => {
    const service = t.app.get(WebhooksService);
    const caller = (clientIds: number[] | null): AuthUser => ({
      id: admin.id,
      email: admin.email,
      name: 'Admin',
      roles: ['admin'],
      clientIds: [],
      tokenId: 'key',
      tokenFamily: null,
      tokenExpiresAt: new Date(Date.now() + 60_000),
      apiKey: { id: 1, prefix: 'abcd1234', scopes: ['webhooks'], clientIds },
    });
    const body = { url: URL_OK, event_types: STATUS as ['tracker.status_changed'] };
    const message = async (promise: Promise<unknown>) =>
      promise.then(
        () => 'created',
        (error: { getResponse?: () => { errors?: { message: string }[] } }) =>
          error.getResponse?.().errors?.[0]?.message,
      );
    expect(await message(service.create(caller([clientA]), body))).toBe(
      "required with an API key narrowed to clients: a subset of the key's client_ids",
    );
    expect(await message(service.create(caller([clientA]), { ...body, client_ids: [clientA, clientB] }))).toBe(
      `must be a subset of the API key's client_ids (not: ${clientB})`,
    );
    expect(await message(service.create(caller([clientA, clientB]), { ...body, client_ids: [clientB] }))).toBe(
      'created',
    );
    expect(await message(service.create(caller(null), body))).toBe('created');
    // The narrowed key sees only webhooks within its clients.
    const seen = await service.list(caller([clientB]), { skip: 0, limit: 1000 });
    expect(seen.items.length).toBeGreaterThan(0);
    expect(seen.items.every((hook) => hook.client_ids?.every((id) => id === clientB))).toBe(true);
  });
});
