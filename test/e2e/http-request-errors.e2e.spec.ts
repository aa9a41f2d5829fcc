import { gzipSync } from 'node:zlib';
import { createTestApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';

const LOGIN = '/api/v1/auth/login';
const LOGIN_JSON = '/api/v1/auth/login/json';

interface Answer {
  status: number;
  body: { detail?: unknown; errors?: unknown };
  headers: Record<string, string>;
}

/** The one validation shape: 422, `detail` listing the field, and `errors` naming it. */
function expectInvalid(res: Answer, field: string, message: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status: 422,
    body: { detail: `Validation failed: ${field}: ${message}`, errors: [{ field, message }] },
  });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

function multipart(boundary: string, parts: string[]): string {
  return `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`;
}

const textPart = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;

describe('Request errors: multipart forms (login accepts text fields only)', () => {
  let t: TestApp;
  let user: CreatedUser;
  beforeAll(async () => ({ t, user } = await createTestAppWithUser()));
  afterAll(() => t?.close());

  const send = (contentType: string, body: string) => t.http().post(LOGIN).set('Content-Type', contentType).send(body);

  it('a file part → 422 naming the field', async () => {
    const res = await t
      .http()
      .post(LOGIN)
      .field('username', user.email)
      .field('password', user.password)
      .attach('f', Buffer.from('x'), 'x.txt');
    expectInvalid(res, 'f', 'unexpected file field');
  });

  it('more than 10 fields → 422 too many fields', async () => {
    let req = t.http().post(LOGIN);
    for (let i = 0; i < 11; i++) req = req.field(`f${i}`, 'v');
    expectInvalid(await req, 'body', 'too many fields');
  });

  it('a field value over 8 KB → 422 naming the field', async () => {
    const res = await t
      .http()
      .post(LOGIN)
      .field('username', user.email)
      .field('password', 'p'.repeat(9 * 1024));
    expectInvalid(res, 'password', 'value too long');
  });

  it('a field name nested too deeply → 422 naming the field', async () => {
    const name = `a${'[b]'.repeat(40)}`;
    expectInvalid(
      await send('multipart/form-data; boundary=b', multipart('b', [textPart(name, 'v')])),
      name,
      'field name nested too deeply',
    );
  });

  it('a part without a field name → 422 field name missing', async () => {
    expectInvalid(
      await send('multipart/form-data; boundary=b', multipart('b', ['Content-Disposition: form-data\r\n\r\nv'])),
      'body',
      'field name missing',
    );
  });

  it('no boundary, a malformed part header or a form cut short → 422 malformed multipart body', async () => {
    expectInvalid(await send('multipart/form-data', 'x'), 'body', 'malformed multipart body');
    expectInvalid(
      await send('multipart/form-data; boundary=b', '--b\r\nContent-Disposition form-data\x01\r\n\r\nv\r\n--b--\r\n'),
      'body',
      'malformed multipart body',
    );
    expectInvalid(
      await send('multipart/form-data; boundary=b', `--b\r\n${textPart('username', 'x')}`),
      'body',
      'malformed multipart body',
    );
  });

  it('another multipart subtype → 415', async () => {
    const res = await send('multipart/mixed; boundary=b', multipart('b', [textPart('username', 'x')]));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ detail: 'Unsupported content type' });
  });

  it('still logs in with a well-formed multipart form', async () => {
    await t.http().post(LOGIN).field('username', user.email).field('password', user.password).expect(200);
  });
});

describe('Request errors: bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  const json = (body: Buffer | string, headers: Record<string, string> = {}) =>
    t
      .http()
      .post(LOGIN_JSON)
      .set({ 'Content-Type': 'application/json', ...headers })
      // The bytes as given: superagent would JSON-encode a Buffer.
      .serialize((data: unknown) => data as string)
      .send(body);

  it('gzip that is not gzip → 422 invalid compressed data', async () => {
    expectInvalid(
      await json(Buffer.from('certainly not gzip'), { 'Content-Encoding': 'gzip' }),
      'body',
      'invalid compressed data',
    );
    expectInvalid(
      await json(Buffer.from('nor deflate'), { 'Content-Encoding': 'deflate' }),
      'body',
      'invalid compressed data',
    );
  });

  it('gzip that is gzip is read (422 names the missing field, not the encoding)', async () => {
    const res = await json(gzipSync(JSON.stringify({ email: 'a@b.c' })), { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(422);
    expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))]).toEqual(['password']);
  });

  it('an unknown Content-Encoding → 415', async () => {
    const res = await json('{}', { 'Content-Encoding': 'compress' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      detail: 'Unsupported Content-Encoding: send the body uncompressed, or as gzip, deflate or br',
    });
  });

  it('a charset other than UTF-8 → 415', async () => {
    const res = await json('{}', { 'Content-Type': 'application/json; charset=latin1' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ detail: 'Unsupported charset: send the body as UTF-8' });
    const form = await t
      .http()
      .post(LOGIN)
      .set('Content-Type', 'application/x-www-form-urlencoded; charset=koi8-r')
      .send('username=a');
    expect(form.status).toBe(415);
    expect(form.body).toEqual({ detail: 'Unsupported charset: send the body as UTF-8' });
  });

  it('malformed JSON → 422 malformed JSON', async () => {
    expectInvalid(await json('{"email":'), 'body', 'malformed JSON');
  });

  it('a form with more than 1000 parameters → 422 too many parameters', async () => {
    const body = Array.from({ length: 1001 }, (_, i) => `p${i}=1`).join('&');
    expectInvalid(await t.http().post(LOGIN).type('form').send(body), 'body', 'too many parameters');
  });
});

describe('Request errors: paths', () => {
  let t: TestApp;
  let admin: CreatedUser;
  beforeAll(async () => ({ t, user: admin } = await createTestAppWithUser('admin')));
  afterAll(() => t?.close());

  it('a path segment that is not valid percent-encoding → 422 path', async () => {
    expectInvalid(await t.http().get('/api/v1/clients/%ZZ').set(admin.auth), 'path', 'invalid percent-encoding');
    expectInvalid(await t.http().get('/api/v1/clients/%E0%A4%A').set(admin.auth), 'path', 'invalid percent-encoding');
    expectInvalid(await t.http().delete('/api/v1/images/%FF').set(admin.auth), 'path', 'invalid percent-encoding');
    expectInvalid(await t.http().get('/api/v1/nope/%ZZ'), 'path', 'invalid percent-encoding');
  });

  it('a well-encoded path still reaches its route', async () => {
    const res = await t.http().get('/api/v1/clients/%31%32').set(admin.auth);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Client not found' });
  });
});
