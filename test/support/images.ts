import { existsSync, readdirSync } from 'node:fs';
import sharp from 'sharp';
import { crc32, deflateSync } from 'node:zlib';
import type { Response } from 'superagent';
import type { TestApp } from './app.js';

export const INVALID_FILE_TYPE =
  'Invalid file type. Allowed types: image/jpeg, image/png, image/gif, image/webp, image/svg+xml';
export const IMAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
export const UPLOAD_FIELDS = ['height', 'id', 'mime_type', 'original_filename', 'size', 'url_path', 'width'];
export const IMAGE_FIELDS = [...UPLOAD_FIELDS, 'storage_filename', 'uploaded_at'].sort();

export type RasterFormat = 'jpeg' | 'png' | 'gif' | 'webp';

/** A real raster image of the given size, generated in memory. */
export function rasterImage(format: RasterFormat, width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .toFormat(format)
    .toBuffer();
}

/** A noisy image: compresses badly, so cutting it short really removes pixel data. */
export function noisyImage(format: RasterFormat, width: number, height: number): Promise<Buffer> {
  return sharp({
    create: { width, height, channels: 3, background: 'black', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  })
    .toFormat(format)
    .toBuffer();
}

/**
 * A valid 1-bit black PNG of any size, built by hand: cheap to make even at 100 megapixels
 * (the pixel data is ~12 MB of zeros that deflate to ~12 KB).
 */
export function bilevelPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc((Math.ceil(width / 8) + 1) * height); // filter byte 0 + zero pixels per row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export function svg(rootAttributes: string, body = '<rect width="1" height="1"/>'): Buffer {
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" ${rootAttributes}>${body}</svg>`);
}

export function uploadImage(
  t: TestApp,
  auth: Record<string, string>,
  bytes: Buffer,
  filename: string,
  contentType: string,
) {
  return t.http().post('/api/v1/images').set(auth).attach('file', bytes, { filename, contentType });
}

/** supertest parser: collect any response body as a Buffer (`.buffer(true).parse(binaryParser)`). */
export function binaryParser(res: Response, callback: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
}

/** Everything in UPLOAD_DIR, temporary files included. */
export function storedFiles(t: TestApp): string[] {
  return existsSync(t.config.uploadDir) ? readdirSync(t.config.uploadDir).sort() : [];
}
