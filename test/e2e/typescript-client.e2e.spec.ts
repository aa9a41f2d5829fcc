import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { runExample } from '../../clients/typescript/example.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { rasterImage } from '../support/images.js';

const bin = (name: string) => join('node_modules', '.bin', name);

/**
 * The typed client in clients/typescript/: its types must be what openapi-typescript generates
 * from the running service's document, its program must compile with `strict` and no casts, and
 * it must work against the real app.
 */
describe('TypeScript client (openapi-typescript + openapi-fetch)', () => {
  let t: TestApp;
  let baseUrl: string;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'tps-client-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('has the types openapi-typescript generates from the served document (else: npm run client:generate)', async () => {
    const document = await (await fetch(`${baseUrl}/openapi.json`)).text();
    writeFileSync(join(dir, 'openapi.json'), document);
    execFileSync(bin('openapi-typescript'), [join(dir, 'openapi.json'), '-o', join(dir, 'schema.d.ts')], {
      stdio: 'pipe',
    });
    const generated = readFileSync(join(dir, 'schema.d.ts'), 'utf8');
    const stale = readFileSync('clients/typescript/schema.d.ts', 'utf8') !== generated;
    // A 7000-line diff helps nobody: say what to run.
    expect(
      stale ? 'clients/typescript/schema.d.ts is stale: run `npm run client:generate` and commit it' : 'current',
    ).toBe('current');
  }, 60_000);

  it('compiles with strict type checking', () => {
    execFileSync(bin('tsc'), ['-p', 'clients/typescript/tsconfig.json'], { stdio: 'pipe' });
  }, 60_000);

  it('logs in, renames the user, creates the chain, ingests, reads back, downloads CSV, uploads and deletes an image, reads a 404 detail, and works with an API key and a webhook', async () => {
    const admin = await t.factories.admin();
    const png = new Blob([new Uint8Array(await rasterImage('png', 4, 3))], { type: 'image/png' });
    const result = await runExample(baseUrl, { email: admin.email, password: admin.password }, png);
    expect(result).toEqual({
      userName: 'Example admin',
      trackerId: expect.any(Number),
      listedLatitude: 48.8566,
      historyPoints: 1,
      analyticsTrackers: 1,
      csvFirstLine: 'Production Run Analytics',
      imageBytes: expect.any(Number),
      deletedImageId: expect.any(Number),
      notFoundDetail: 'Tracker not found',
      keyTrackers: 1,
      webhookSecretPrefix: 'whsec_',
      webhookDeliveries: 0,
      revokedKeyStatus: 401,
    });
    expect(t.responses.violations).toEqual([]);
  }, 60_000);
});
