import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { createTestApp, createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import {
  bilevelPng,
  binaryParser,
  IMAGE_CSP,
  IMAGE_FIELDS,
  INVALID_FILE_TYPE,
  noisyImage,
  rasterImage,
  storedFiles,
  svg,
  UPLOAD_FIELDS,
  uploadImage,
} from '../support/images.js';

const STORAGE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(jpg|jpeg|png|gif|webp|svg)$/;
const NO_SUFFIX_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/;

describe('Images', () => {
  let t: TestApp;
  let admin: CreatedUser;
  let user: CreatedUser;
  let otherUser: CreatedUser;
  let ingest: CreatedUser;

  beforeAll(async () => {
    t = await createTestApp();
    [admin, user, otherUser, ingest] = await Promise.all([
      t.factories.admin(),
      t.factories.user(),
      t.factories.user(),
      t.factories.ingest(),
    ]);
  });
  afterAll(() => t.close());

  describe('upload', () => {
    it.each([
      ['jpeg', 'image/jpeg', 'photo.jpg', 40, 30],
      ['png', 'image/png', 'logo.png', 17, 9],
      ['gif', 'image/gif', 'anim.gif', 5, 7],
      ['webp', 'image/webp', 'pic.webp', 64, 48],
    ] as const)(
      'accepts %s with its decoded size and exactly the upload fields',
      async (format, type, filename, width, height) => {
        const bytes = await rasterImage(format, width, height);
        const res = await uploadImage(t, user.auth, bytes, filename, type).expect(201);
        expect(Object.keys(res.body).sort()).toEqual(UPLOAD_FIELDS);
        expect(res.body).toEqual({
          id: expect.any(Number),
          url_path: expect.stringMatching(/^\/api\/v1\/images\/[0-9a-f-]{36}\.[a-z]+$/),
          original_filename: filename,
          mime_type: type,
          size: bytes.length,
          width,
          height,
        });
        const [row] = await t.db.query(`SELECT storage_filename, uploaded_by FROM images WHERE id = $1`, [res.body.id]);
        expect(row.uploaded_by).toBe(user.id);
        expect(res.body.url_path).toBe(`/api/v1/images/${row.storage_filename}`);
        expect(existsSync(join(t.config.uploadDir, row.storage_filename))).toBe(true);
      },
    );

    it.each([
      ['width/height attributes', 'width="120" height="80"', 120, 80],
      ['only a viewBox', 'viewBox="0 0 64 32"', 64, 32],
      ['width and viewBox (aspect ratio)', 'width="100" viewBox="0,0,50,25"', 100, 50],
      ['physical units', 'width="1in" height="72pt"', 96, 96],
      ['percentages (viewBox decides)', 'width="100%" height="100%" viewBox="0 0 30 20"', 30, 20],
      ['no size at all (browser default)', '', 300, 150],
    ])('accepts an SVG sized by %s', async (_, attributes, width, height) => {
      const res = await uploadImage(t, user.auth, svg(attributes), 'drawing.svg', 'image/svg+xml').expect(201);
      expect(res.body).toMatchObject({ mime_type: 'image/svg+xml', width, height });
      expect(Object.keys(res.body).sort()).toEqual(UPLOAD_FIELDS);
    });

    it('accepts an SVG with an XML declaration, comments and a BOM', async () => {
      const bytes = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(
          '<?xml version="1.0" encoding="UTF-8"?>\n<!-- made by hand -->\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="20"><![CDATA[x]]><g>&amp;</g></svg>\n',
        ),
      ]);
      const res = await uploadImage(t, user.auth, bytes, 'bom.svg', 'image/svg+xml').expect(201);
      expect(res.body).toMatchObject({ width: 10, height: 20 });
    });

    it('reports the displayed size of a rotated JPEG (EXIF orientation 6)', async () => {
      const bytes = await sharp({ create: { width: 40, height: 20, channels: 3, background: 'red' } })
        .jpeg()
        .withMetadata({ orientation: 6 })
        .toBuffer();
      const res = await uploadImage(t, user.auth, bytes, 'rotated.jpg', 'image/jpeg').expect(201);
      expect(res.body).toMatchObject({ width: 20, height: 40 });
    });

    it('accepts an image of exactly 100 megapixels', async () => {
      const res = await uploadImage(t, user.auth, bilevelPng(10_000, 10_000), 'big.png', 'image/png').expect(201);
      expect(res.body).toMatchObject({ width: 10_000, height: 10_000 });
    });

    it('accepts a declared type with parameters and odd case', async () => {
      const res = await uploadImage(t, user.auth, await rasterImage('png', 3, 3), 'a.png', 'Image/PNG; foo=bar').expect(
        201,
      );
      expect(res.body.mime_type).toBe('image/png');
    });

    describe('rejects with 400 and the exact detail, storing nothing', () => {
      let filesBefore: string[];
      let rowsBefore: number;
      beforeEach(async () => {
        filesBefore = storedFiles(t);
        rowsBefore = (await t.db.query(`SELECT count(*)::int AS n FROM images`))[0].n;
      });
      afterEach(async () => {
        expect(storedFiles(t)).toEqual(filesBefore);
        expect((await t.db.query(`SELECT count(*)::int AS n FROM images`))[0].n).toBe(rowsBefore);
      });
      const expectInvalid = async (bytes: Buffer, filename: string, type: string) => {
        const res = await uploadImage(t, user.auth, bytes, filename, type);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ detail: INVALID_FILE_TYPE });
      };

      it('a PNG labelled image/jpeg', async () =>
        expectInvalid(await rasterImage('png', 4, 4), 'fake.jpg', 'image/jpeg'));
      it('a WebP labelled image/gif', async () =>
        expectInvalid(await rasterImage('webp', 4, 4), 'fake.gif', 'image/gif'));
      it('a JPEG labelled image/svg+xml', async () =>
        expectInvalid(await rasterImage('jpeg', 4, 4), 'fake.svg', 'image/svg+xml'));
      it('an SVG labelled image/png', async () => expectInvalid(svg('width="4" height="4"'), 'fake.png', 'image/png'));
      it('a text file', async () => expectInvalid(Buffer.from('hello, world\n'), 'notes.txt', 'text/plain'));
      it('a text file labelled image/png', async () =>
        expectInvalid(Buffer.from('hello, world\n'), 'notes.png', 'image/png'));
      it('a real image of a type not on the list', async () =>
        expectInvalid(await rasterImage('png', 4, 4), 'x.png', 'image/bmp'));
      it('an empty file', async () => expectInvalid(Buffer.alloc(0), 'empty.png', 'image/png'));
      it('a truncated JPEG', async () => {
        const bytes = await noisyImage('jpeg', 200, 150);
        await expectInvalid(bytes.subarray(0, Math.floor(bytes.length * 0.7)), 'cut.jpg', 'image/jpeg');
      });
      it('a truncated PNG', async () => {
        const bytes = await noisyImage('png', 200, 150);
        await expectInvalid(bytes.subarray(0, Math.floor(bytes.length * 0.7)), 'cut.png', 'image/png');
      });
      it('a valid image over 100 megapixels', async () =>
        expectInvalid(bilevelPng(10_001, 10_000), 'huge.png', 'image/png'));
      it('an SVG declaring more than 100 megapixels', async () =>
        expectInvalid(svg('width="20000" height="20000"'), 'huge.svg', 'image/svg+xml'));
      it('an SVG with a DOCTYPE/ENTITY (XXE)', async () =>
        expectInvalid(
          Buffer.from(
            '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><text>&xxe;</text></svg>',
          ),
          'xxe.svg',
          'image/svg+xml',
        ));
      it('an SVG entity bomb', async () =>
        expectInvalid(
          Buffer.from(
            '<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg">&b;</svg>',
          ),
          'bomb.svg',
          'image/svg+xml',
        ));
      it('an undefined entity reference in an SVG', async () =>
        expectInvalid(svg('width="1" height="1"', '<text>&nbsp;</text>'), 'ent.svg', 'image/svg+xml'));
      it('a truncated SVG', async () =>
        expectInvalid(
          Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><g><rect/>'),
          'cut.svg',
          'image/svg+xml',
        ));
      it('HTML labelled image/svg+xml', async () =>
        expectInvalid(Buffer.from('<html><body><svg></svg></body></html>'), 'page.svg', 'image/svg+xml'));
      it('an <svg> root in a foreign namespace', async () =>
        expectInvalid(Buffer.from('<svg xmlns="http://example.com/not-svg"/>'), 'ns.svg', 'image/svg+xml'));
      it('two root elements', async () =>
        expectInvalid(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/><svg/>'), 'two.svg', 'image/svg+xml'));
      it('an SVG that is not UTF-8', async () =>
        expectInvalid(
          Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><text>\u00e9</text></svg>', 'utf16le'),
          'u16.svg',
          'image/svg+xml',
        ));
    });

    it('answers 422 when the file part is missing, misnamed or doubled', async () => {
      const missing = await t.http().post('/api/v1/images').set(user.auth).field('note', 'x').expect(422);
      expect(missing.body.errors).toEqual([{ field: 'file', message: expect.any(String) }]);
      await t.http().post('/api/v1/images').set(user.auth).send({ file: 'x' }).expect(422);
      const misnamed = await t
        .http()
        .post('/api/v1/images')
        .set(user.auth)
        .attach('image', Buffer.from('x'), { filename: 'a.png', contentType: 'image/png' })
        .expect(422);
      expect(misnamed.body.errors[0].field).toBe('image');
      const png = await rasterImage('png', 2, 2);
      await t
        .http()
        .post('/api/v1/images')
        .set(user.auth)
        .attach('file', png, { filename: 'a.png', contentType: 'image/png' })
        .attach('file', png, { filename: 'b.png', contentType: 'image/png' })
        .expect(422);
      const malformed = await t
        .http()
        .post('/api/v1/images')
        .set(user.auth)
        .set('Content-Type', 'multipart/form-data; boundary=xyz')
        .send('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc');
      expect(malformed.status).toBe(422);
    });

    it('keeps the original extension when it fits the type, else the canonical one', async () => {
      const jpeg = await rasterImage('jpeg', 2, 2);
      const cases: [string, Buffer, string, string][] = [
        ['Photo.JPEG', jpeg, 'image/jpeg', 'jpeg'],
        ['photo.jpg', jpeg, 'image/jpeg', 'jpg'],
        ['photo.png', jpeg, 'image/jpeg', 'jpg'],
        ['photo', jpeg, 'image/jpeg', 'jpg'],
        ['vector.SVG', svg('width="1" height="1"'), 'image/svg+xml', 'svg'],
        ['evil.php', await rasterImage('gif', 2, 2), 'image/gif', 'gif'],
      ];
      for (const [filename, bytes, type, extension] of cases) {
        const res = await uploadImage(t, user.auth, bytes, filename, type).expect(201);
        const meta = await t.http().get(`/api/v1/images/${res.body.id}`).set(user.auth).expect(200);
        expect(meta.body.storage_filename).toMatch(STORAGE_NAME);
        expect(meta.body.storage_filename.endsWith(`.${extension}`)).toBe(true);
        expect(meta.body.original_filename).toBe(filename);
      }
    });

    it('neutralises path traversal, NUL and control characters in file names', async () => {
      const png = await rasterImage('png', 2, 2);
      const cases: [string, string][] = [
        ['../../etc/pa\u0007ss\u0000wd.png', 'passwd.png'],
        ['..\\..\\windows\\win.png', 'win.png'],
        ['tab\there\u001b[31m\u202eevil.png', 'tabhere[31mevil.png'],
        ['..', 'upload'],
        ['\u0001\u0002.png', '.png'],
        [`${'n'.repeat(300)}.png`, `${'n'.repeat(251)}.png`],
      ];
      for (const [sent, expected] of cases) {
        const res = await uploadImage(t, user.auth, png, sent, 'image/png').expect(201);
        expect(res.body.original_filename).toBe(expected);
        const [row] = await t.db.query(`SELECT original_filename, storage_filename FROM images WHERE id = $1`, [
          res.body.id,
        ]);
        expect(row.original_filename).toBe(expected);
        expect(row.storage_filename).toMatch(STORAGE_NAME);
      }
      // A name of nothing but control characters is an empty name: browsers' "no file chosen".
      const unnamed = await uploadImage(t, user.auth, png, '\u0001\u0002', 'image/png').expect(422);
      expect(unnamed.body.errors[0].field).toBe('file');
      // Nothing but generated names ever lands in the upload directory.
      expect(storedFiles(t).every((name) => STORAGE_NAME.test(name))).toBe(true);
    });

    it('keeps UTF-8 file names intact', async () => {
      const res = await uploadImage(t, user.auth, await rasterImage('png', 2, 2), 'café 😀.png', 'image/png').expect(
        201,
      );
      expect(res.body.original_filename).toBe('café 😀.png');
    });
  });

  describe('reading', () => {
    let uploaded: { id: number; url_path: string; size: number };
    let bytes: Buffer;

    beforeAll(async () => {
      bytes = await rasterImage('png', 12, 8);
      uploaded = (await uploadImage(t, user.auth, bytes, 'read-me.png', 'image/png').expect(201)).body;
    });

    it('returns the full Image with uploaded_at in ISO 8601 without a suffix', async () => {
      const res = await t.http().get(`/api/v1/images/${uploaded.id}`).set(otherUser.auth).expect(200);
      expect(Object.keys(res.body).sort()).toEqual(IMAGE_FIELDS);
      const [row] = await t.db.query(`SELECT storage_filename, uploaded_at FROM images WHERE id = $1`, [uploaded.id]);
      expect(res.body).toEqual({
        id: uploaded.id,
        original_filename: 'read-me.png',
        storage_filename: row.storage_filename,
        mime_type: 'image/png',
        size: bytes.length,
        width: 12,
        height: 8,
        url_path: `/api/v1/images/${row.storage_filename}`,
        uploaded_at: expect.stringMatching(NO_SUFFIX_ISO),
      });
      expect(new Date(`${res.body.uploaded_at}Z`).getTime()).toBe(new Date(row.uploaded_at).getTime());
    });

    it('answers 404 Image not found for an unknown id and 422 for ids out of range', async () => {
      expect((await t.http().get('/api/v1/images/999999').set(user.auth).expect(404)).body).toEqual({
        detail: 'Image not found',
      });
      await t.http().get('/api/v1/images/0').set(user.auth).expect(422);
      await t.http().get('/api/v1/images/99999999999').set(user.auth).expect(422);
    });

    it('requires a token for metadata, and refuses ingest on every image route', async () => {
      expect((await t.http().get(`/api/v1/images/${uploaded.id}`).expect(401)).body).toEqual({
        detail: 'Not authenticated',
      });
      await t.http().get('/api/v1/images').expect(401);
      const forbidden = { detail: 'Not enough permissions' };
      expect((await t.http().get(`/api/v1/images/${uploaded.id}`).set(ingest.auth).expect(403)).body).toEqual(
        forbidden,
      );
      expect((await t.http().get('/api/v1/images').set(ingest.auth).expect(403)).body).toEqual(forbidden);
      expect((await uploadImage(t, ingest.auth, bytes, 'x.png', 'image/png').expect(403)).body).toEqual(forbidden);
      expect((await t.http().delete(`/api/v1/images/${uploaded.id}`).set(ingest.auth).expect(403)).body).toEqual(
        forbidden,
      );
    });

    it('serves the bytes publicly with the documented headers, and 304 for a matching If-None-Match', async () => {
      const res = await t.http().get(uploaded.url_path).buffer(true).parse(binaryParser).expect(200);
      expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers['content-length']).toBe(String(bytes.length));
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe(IMAGE_CSP);
      const etag = res.headers['etag'];
      expect(etag).toMatch(/^"[^"]+"$/);

      const again = await t.http().get(uploaded.url_path).expect(200);
      expect(again.headers['etag']).toBe(etag);
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await t.http().get(uploaded.url_path).set('If-None-Match', header).expect(304);
        expect(cached.headers['etag']).toBe(etag);
        expect(cached.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(cached.text ?? '').toBe('');
      }
      await t.http().get(uploaded.url_path).set('If-None-Match', '"something-else"').expect(200);
    });

    it('answers HEAD on the bytes with the same headers and no body', async () => {
      const res = await t.http().head(uploaded.url_path).expect(200);
      expect(res.headers['content-length']).toBe(String(bytes.length));
      expect(res.headers['content-security-policy']).toBe(IMAGE_CSP);
      expect(res.headers['etag']).toMatch(/^"[^"]+"$/);
    });

    it('answers 404 (never cached) when the row exists but its file is gone', async () => {
      const res = await uploadImage(t, user.auth, await rasterImage('png', 2, 2), 'vanishing.png', 'image/png').expect(
        201,
      );
      const name = res.body.url_path.split('/').pop();
      rmSync(join(t.config.uploadDir, name));
      const missing = await t.http().get(res.body.url_path).expect(404);
      expect(missing.body).toEqual({ detail: 'Image not found' });
      expect(missing.headers['cache-control'] ?? '').not.toContain('immutable');
    });

    it('answers 404 Image not found for unknown or malformed names without touching the disk', async () => {
      for (const name of [
        '00000000-0000-4000-8000-000000000000.png',
        'nope.png',
        '..%2F..%2Fetc%2Fpasswd',
        '.hidden',
        encodeURIComponent(`../${t.config.uploadDir}`),
        'a%00.png',
      ]) {
        const res = await t.http().get(`/api/v1/images/${name}`);
        expect([res.status, res.body]).toEqual([404, { detail: 'Image not found' }]);
      }
    });

    it('lists images newest first with paging', async () => {
      await t.db.query(`DELETE FROM images`);
      await t.db.query(
        `INSERT INTO images (original_filename, storage_filename, mime_type, size, width, height, uploaded_at)
         SELECT 'img-' || n || '.png', gen_random_uuid() || '.png', 'image/png', n, 1, 1, timestamptz '2026-01-01' + n * interval '1 minute'
           FROM generate_series(1, 7) AS n`,
      );
      // Two rows at the same instant: the higher id is newer.
      await t.db.query(
        `UPDATE images SET uploaded_at = timestamptz '2026-01-01' + interval '7 minutes' WHERE original_filename = 'img-6.png'`,
      );
      const first = await t.http().get('/api/v1/images?limit=3').set(user.auth).expect(200);
      expect(first.body).toMatchObject({ total: 7, page: 1, size: 3, pages: 3 });
      expect(first.body.items.map((i: { original_filename: string }) => i.original_filename)).toEqual([
        'img-7.png',
        'img-6.png',
        'img-5.png',
      ]);
      expect(Object.keys(first.body.items[0]).sort()).toEqual(IMAGE_FIELDS);
      expect(first.body.items[0].uploaded_at).toBe('2026-01-01T00:07:00.000');
      const last = await t.http().get('/api/v1/images?skip=6&limit=3').set(user.auth).expect(200);
      expect(last.body).toMatchObject({ total: 7, page: 3, size: 3, pages: 3 });
      expect(last.body.items.map((i: { original_filename: string }) => i.original_filename)).toEqual(['img-1.png']);
      const beyond = await t.http().get('/api/v1/images?skip=50').set(user.auth).expect(200);
      expect(beyond.body).toMatchObject({ items: [], total: 7, page: 2, size: 50, pages: 1 });
      await t.http().get('/api/v1/images?limit=0').set(user.auth).expect(422);
      await t.http().get('/api/v1/images?skip=-1').set(user.auth).expect(422);
    });
  });

  describe('SVG serving', () => {
    it('serves an SVG containing script only under the sandbox CSP', async () => {
      const body = svg(
        'width="10" height="10" onload="alert(1)"',
        '<script>alert(document.cookie)</script><rect width="10" height="10"/>',
      );
      const res = await uploadImage(t, user.auth, body, 'script.svg', 'image/svg+xml').expect(201);
      const served = await t.http().get(res.body.url_path).buffer(true).parse(binaryParser).expect(200);
      expect(served.headers['content-type']).toBe('image/svg+xml');
      expect(served.headers['content-security-policy']).toBe(IMAGE_CSP);
      expect(served.headers['x-content-type-options']).toBe('nosniff');
      expect((served.body as Buffer).equals(body)).toBe(true);
    });
  });

  describe('delete', () => {
    it('lets only the uploader (or an admin) delete, then the image and its file are gone', async () => {
      const res = await uploadImage(t, user.auth, await rasterImage('gif', 3, 3), 'mine.gif', 'image/gif').expect(201);
      const { id, url_path } = res.body;
      const meta = (await t.http().get(`/api/v1/images/${id}`).set(user.auth).expect(200)).body;
      const file = join(t.config.uploadDir, meta.storage_filename);
      expect(existsSync(file)).toBe(true);

      expect((await t.http().delete(`/api/v1/images/${id}`).set(otherUser.auth).expect(403)).body).toEqual({
        detail: 'Not enough permissions',
      });
      expect(existsSync(file)).toBe(true);

      const deleted = await t.http().delete(`/api/v1/images/${id}`).set(user.auth).expect(200);
      expect(deleted.body).toEqual(meta);
      expect(existsSync(file)).toBe(false);
      expect((await t.http().get(`/api/v1/images/${id}`).set(user.auth).expect(404)).body).toEqual({
        detail: 'Image not found',
      });
      expect((await t.http().get(url_path).expect(404)).body).toEqual({ detail: 'Image not found' });
      expect((await t.http().delete(`/api/v1/images/${id}`).set(user.auth).expect(404)).body).toEqual({
        detail: 'Image not found',
      });
    });

    it("lets an admin delete anyone's image", async () => {
      const res = await uploadImage(t, user.auth, svg('width="2" height="2"'), 'theirs.svg', 'image/svg+xml').expect(
        201,
      );
      await t.http().delete(`/api/v1/images/${res.body.id}`).set(admin.auth).expect(200);
      await t.http().get(res.body.url_path).expect(404);
    });

    it('answers 404 for a missing id and 422 for a non-numeric one', async () => {
      expect((await t.http().delete('/api/v1/images/987654').set(admin.auth).expect(404)).body).toEqual({
        detail: 'Image not found',
      });
      await t.http().delete('/api/v1/images/abc.png').set(admin.auth).expect(422);
    });
  });

  it('leaves no file behind when the database insert fails', async () => {
    const before = storedFiles(t);
    await t.db.query(`ALTER TABLE images ADD CONSTRAINT images_test_reject CHECK (size < 0) NOT VALID`);
    try {
      const res = await uploadImage(t, user.auth, await rasterImage('png', 5, 5), 'doomed.png', 'image/png');
      expect([res.status, res.body]).toEqual([500, { detail: 'Internal server error' }]);
    } finally {
      await t.db.query(`ALTER TABLE images DROP CONSTRAINT images_test_reject`);
    }
    expect(storedFiles(t)).toEqual(before);
  });

  it('documents the image routes in OpenAPI, including the multipart body', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    const upload = doc.paths['/api/v1/images'].post;
    expect(upload.requestBody.content['multipart/form-data'].schema.properties.file).toEqual({
      type: 'string',
      format: 'binary',
    });
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '413', '422']));
    expect(doc.paths['/api/v1/images/{image_id}'].get.responses['404']).toBeDefined();
    expect(doc.paths['/api/v1/images/{image_id}'].delete.responses['200']).toBeDefined();
    // The bytes' URL is `/api/v1/images/<storage_filename>`, documented apart from `{image_id}`.
    expect(doc.paths['/api/v1/images/{storage_name}.{extension}'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/images/{storage_filename}']).toBeUndefined();
  });
});

describe('Images: size limit', () => {
  let t: TestApp;
  let user: CreatedUser;

  beforeAll(async () => ({ t, user } = await createTestAppWithUser('user', { env: { IMAGE_MAX_BYTES: '2000' } })));
  afterAll(() => t.close());

  it('answers 413 over IMAGE_MAX_BYTES and stores nothing', async () => {
    const big = await noisyImage('png', 60, 60);
    expect(big.length).toBeGreaterThan(2000);
    const res = await uploadImage(t, user.auth, big, 'big.png', 'image/png').expect(413);
    expect(res.body).toEqual({ detail: 'File too large. Maximum size is 1.95 KB' });
    expect(storedFiles(t)).toEqual([]);
    // A body far over the limit is drained, so the client reads the answer instead of a reset.
    const huge = await uploadImage(t, user.auth, Buffer.alloc(3 * 1024 * 1024, 1), 'huge.png', 'image/png').expect(413);
    expect(huge.body).toEqual({ detail: 'File too large. Maximum size is 1.95 KB' });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM images`))[0].n).toBe(0);
  });

  it('accepts a file under the limit', async () => {
    const small = await rasterImage('png', 4, 4);
    expect(small.length).toBeLessThan(2000);
    await uploadImage(t, user.auth, small, 'small.png', 'image/png').expect(201);
  });
});
