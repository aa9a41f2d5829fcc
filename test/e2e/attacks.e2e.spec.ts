import sharp from 'sharp';
import { createTestApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { bilevelPng } from '../support/images.js';

const INVALID_TYPE = 'Invalid file type. Allowed types: image/jpeg, image/png, image/gif, image/webp, image/svg+xml';

describe('upload attack set', () => {
  let t: TestApp;
  let user: CreatedUser;
  const upload = (body: Buffer, filename: string, contentType: string) =>
    t.http().post('/api/v1/images').set(user.auth).attach('file', body, { filename, contentType });

  beforeAll(async () => ({ t, user } = await createTestAppWithUser()));
  afterAll(() => t.close());

  it('rejects a PNG labelled as GIF and a GIF/JS polyglot labelled as JavaScript-friendly types', async () => {
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } })
      .png()
      .toBuffer();
    expect((await upload(png, 'a.gif', 'image/gif')).body).toEqual({ detail: INVALID_TYPE });
    const polyglot = Buffer.concat([Buffer.from('GIF89a/*'), Buffer.alloc(16), Buffer.from('*/=alert(1)//')]);
    const res = await upload(polyglot, 'a.gif', 'image/gif');
    expect(res.status).toBe(400);
    expect((await upload(png, 'a.js', 'application/javascript')).body).toEqual({ detail: INVALID_TYPE });
  });

  it('rejects an SVG with an external entity (XXE) and anything that is not an svg root', async () => {
    const xxe = Buffer.from(
      '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><text>&x;</text></svg>',
    );
    expect((await upload(xxe, 'x.svg', 'image/svg+xml')).status).toBe(400);
    const html = Buffer.from('<html><body><script>alert(1)</script></body></html>');
    expect((await upload(html, 'x.svg', 'image/svg+xml')).body).toEqual({ detail: INVALID_TYPE });
  });

  it('serves an SVG with foreignObject/script only under the sandbox CSP', async () => {
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="5" height="5"><foreignObject width="5" height="5"><div xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></div></foreignObject></svg>',
    );
    const res = await upload(svg, 'fo.svg', 'image/svg+xml');
    if (res.status === 201) {
      const bytes = await t.http().get(res.body.url_path).expect(200);
      expect(bytes.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
      expect(bytes.headers['x-content-type-options']).toBe('nosniff');
    } else {
      expect(res.status).toBe(400);
    }
  });

  it('rejects huge declared dimensions without decoding them', async () => {
    // 200 megapixels of 1-bit zeros: a ~25 KB file that would decode to gigabytes.
    const res = await upload(bilevelPng(20_000, 10_000), 'bomb.png', 'image/png');
    expect(res.status).toBe(400);
  });

  it('neutralises path traversal and control characters in file names', async () => {
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: 'blue' } })
      .png()
      .toBuffer();
    const res = await upload(png, '../../etc/pa\u0007ss\u0000wd.png', 'image/png');
    expect(res.status).toBe(201);
    // eslint-disable-next-line no-control-regex -- control characters are exactly what must be gone
    expect(res.body.original_filename).not.toMatch(/[/\\\u0000-\u001f]|\.\./);
    const meta = await t.http().get(`/api/v1/images/${res.body.id}`).set(user.auth).expect(200);
    expect(meta.body.storage_filename).toMatch(/^[0-9a-f-]{36}\.png$/);
  });
});

describe('CSV import attack set', () => {
  let t: TestApp;
  let user: CreatedUser;
  let runId: number;
  const importCsv = (body: Buffer) =>
    t
      .http()
      .post(`/api/v1/trackers/import-csv?production_run_id=${runId}`)
      .set(user.auth)
      .attach('file', body, { filename: 'x.csv', contentType: 'text/csv' });
  const trackerCount = async () => (await t.db.query(`SELECT count(*)::int AS n FROM trackers`))[0].n as number;

  beforeAll(async () => {
    t = await createTestApp();
    const client = await t.factories.client();
    runId = (await t.factories.run({ clientId: client.id })).id;
    user = await t.factories.user({ clients: [client.id] });
  });
  afterAll(() => t.close());

  it('rejects a binary file with a clear 422 and writes nothing', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } })
      .png()
      .toBuffer();
    const res = await importCsv(png);
    expect(res.status).toBe(422);
    expect(typeof res.body.detail).toBe('string');
    expect(await trackerCount()).toBe(0);
  });

  it('rejects invalid UTF-8 with 422 and writes nothing', async () => {
    const res = await importCsv(
      Buffer.concat([Buffer.from('name\nok-1\n'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('\n')]),
    );
    expect(res.status).toBe(422);
    expect(await trackerCount()).toBe(0);
  });

  it('survives a 10 MB single line without a 5xx and writes nothing', async () => {
    const res = await importCsv(Buffer.from(`name\n${'A'.repeat(10 * 1024 * 1024)}\n`));
    expect([413, 422]).toContain(res.status);
    expect(await trackerCount()).toBe(0);
  });
});
