import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import { createTestDatabase, dropTestDatabase } from '../support/database.js';
import { call, waitFor } from '../support/reliability.js';
import { buildIfNeeded, freePort, spawnProductionService, type ServiceProcess } from '../support/service-process.js';

const ADMIN = { email: 'memory-admin@example.com', password: 'memory-pass-123' };
const PARALLEL_UPLOADS = 40;
const RSS_BOUND_MB = 300;

/** Peak resident memory of a process so far (Linux), in MB. */
function peakRssMb(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/**
 * Uploads are streamed to a temporary file and decoded from there, so memory does not grow with
 * the number of uploads in flight. Measured on the built service (a child process), where the
 * test's own buffers do not count.
 */
describe('Images: memory stays bounded under parallel uploads (the built service as a child process)', () => {
  let database: string;
  let service: ServiceProcess;
  let dataDir: string;
  let base: string;

  beforeAll(async () => {
    buildIfNeeded();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'tps-memory-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawnProductionService({ database, dataDir, port, admin: ADMIN, logLevel: 'warn' });
    await waitFor(
      async () => (await call(base, 'GET', '/openapi.json', { timeoutMs: 1000 })).status === 200,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`service did not start: ${error.message}\n${service.stdout()}${service.stderr()}`);
    });
  }, 180_000);

  afterAll(async () => {
    await service?.cleanup();
    if (database) await dropTestDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${PARALLEL_UPLOADS} parallel ~8.7 MB uploads keep the peak RSS under ${RSS_BOUND_MB} MB, and leave no temporary file`, async () => {
    const login = await call(base, 'POST', '/api/v1/auth/login/json', { body: ADMIN });
    expect(login.status).toBe(200);
    const auth = { Authorization: `Bearer ${(login.body as { access_token: string }).access_token}` };
    // Noise compresses badly: a valid PNG of ~8.7 MB.
    const png = await sharp({
      create: {
        width: 1670,
        height: 1670,
        channels: 3,
        background: 'black',
        noise: { type: 'gaussian', mean: 128, sigma: 40 },
      },
    })
      .png({ compressionLevel: 1 })
      .toBuffer();
    expect(png.length).toBeGreaterThan(8_500_000);
    const upload = (bytes: Buffer, name = 'big.png') =>
      request(base)
        .post('/api/v1/images')
        .set(auth)
        .attach('file', bytes, { filename: name, contentType: 'image/png' });

    await upload(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } })
        .png()
        .toBuffer(),
      'warm-up.png',
    ).expect(201);
    const before = peakRssMb(service.child.pid as number);
    const responses = await Promise.all(Array.from({ length: PARALLEL_UPLOADS }, () => upload(png)));
    expect(responses.map((res) => res.status)).toEqual(Array(PARALLEL_UPLOADS).fill(201));
    expect(responses[0].body).toMatchObject({ width: 1670, height: 1670, size: png.length, mime_type: 'image/png' });
    const peak = peakRssMb(service.child.pid as number);
    expect({ before: Math.round(before), peak: Math.round(peak), bounded: peak < RSS_BOUND_MB }).toEqual(
      expect.objectContaining({ bounded: true }),
    );

    // Refused uploads (not an image, over the size limit) leave nothing behind either.
    await upload(Buffer.concat([Buffer.from('not a png'), png.subarray(0, 1000)])).expect(400);
    const uploads = join(dataDir, 'uploads');
    const stored = readdirSync(uploads);
    expect(stored).toHaveLength(PARALLEL_UPLOADS + 1);
    expect(stored.filter((name) => name.startsWith('.'))).toEqual([]);
  }, 60_000);
});
