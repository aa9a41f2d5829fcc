import sharp from 'sharp';
import { createTestAppWithUser, type TestApp } from '../support/app.js';
import type { CreatedUser } from '../support/factories.js';
import { INVALID_FILE_TYPE, storedFiles, uploadImage } from '../support/images.js';

/** A GIF of `frames` 4 × 3 frames whose logical screen (canvas) says `canvasWidth` × `canvasHeight`. */
async function gif(canvasWidth: number, canvasHeight: number, frames = 1): Promise<Buffer> {
  const raw = Buffer.alloc(4 * 3 * 3 * frames, 90);
  const bytes = await sharp(raw, { raw: { width: 4, height: 3 * frames, channels: 3, pageHeight: 3 } })
    .gif({ loop: 0 })
    .toBuffer();
  const crafted = Buffer.from(bytes);
  crafted.writeUInt16LE(canvasWidth, 6);
  crafted.writeUInt16LE(canvasHeight, 8);
  return crafted;
}

/** A GIF is displayed at its canvas size, so that is the size reported and the size limited. */
describe('Images: GIF canvas size', () => {
  let t: TestApp;
  let user: CreatedUser;
  beforeAll(async () => ({ t, user } = await createTestAppWithUser('user', { env: { NODE_ENV: 'production' } })));
  afterAll(() => t.close());

  it.each([
    ['a 65 535 × 65 535 canvas with one 4 × 3 frame', 65_535, 65_535, 1],
    ['an animated GIF whose canvas is over 100 megapixels', 12_000, 9_000, 2],
  ])('%s → 400, nothing stored', async (_label, width, height, frames) => {
    const before = storedFiles(t);
    const res = await uploadImage(t, user.auth, await gif(width, height, frames), 'canvas.gif', 'image/gif');
    expect([res.status, res.body]).toEqual([400, { detail: INVALID_FILE_TYPE }]);
    expect(storedFiles(t)).toEqual(before);
  });

  it('reports the canvas, not the first frame, and accepts a canvas of exactly 100 megapixels', async () => {
    const res = await uploadImage(t, user.auth, await gif(50, 40), 'small.gif', 'image/gif');
    expect([res.status, res.body.width, res.body.height]).toEqual([201, 50, 40]);
    const limit = await uploadImage(t, user.auth, await gif(10_000, 10_000), 'limit.gif', 'image/gif');
    expect([limit.status, limit.body.width, limit.body.height]).toEqual([201, 10_000, 10_000]);
  });

  it('an animated GIF reports one frame of its canvas, not the frames stacked', async () => {
    const res = await uploadImage(t, user.auth, await gif(4, 3, 3), 'anim.gif', 'image/gif');
    expect([res.status, res.body.width, res.body.height]).toEqual([201, 4, 3]);
  });
});
