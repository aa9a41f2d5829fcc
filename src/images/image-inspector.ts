import { open, readFile } from 'node:fs/promises';
import type SharpFactory from 'sharp';

/**
 * sharp (libvips, ~28 MB resident) is loaded on the first upload, not at boot: most instances
 * never decode an image, and idle memory is a goal of its own.
 */
let sharpModule: Promise<typeof SharpFactory> | undefined;
function loadSharp(): Promise<typeof SharpFactory> {
  sharpModule ??= import('sharp').then((m) => m.default);
  return sharpModule;
}
import { acceptedMimeType, MAX_IMAGE_PIXELS, type ImageMimeType } from './image-types.js';
import { inspectSvg } from './svg-inspector.js';

interface InspectedImage {
  mimeType: ImageMimeType;
  width: number;
  height: number;
}

type RasterType = Exclude<ImageMimeType, 'image/svg+xml'>;

/** Leading bytes of each raster family: checked before any decoder sees the data. */
const SIGNATURES: Record<RasterType, (b: Buffer) => boolean> = {
  'image/jpeg': (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/gif': (b) => ['GIF87a', 'GIF89a'].includes(b.subarray(0, 6).toString('latin1')),
  'image/webp': (b) =>
    b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};

/** sharp's name for each raster family. */
const SHARP_FORMATS: Record<RasterType, string> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * Accepts bytes only when the declared type is one of the five AND the content is that same
 * family, fully decodable, and at most 100 megapixels. Returns the type and the size as displayed,
 * or null for anything else (the caller answers 400 with the one detail for a bad file type).
 */
export async function inspectImage(
  source: Buffer | string,
  declaredType: string | undefined,
): Promise<InspectedImage | null> {
  const mimeType = acceptedMimeType(declaredType);
  if (mimeType === null) return null;
  let size: { width: number; height: number } | null;
  if (mimeType === 'image/svg+xml') {
    const bytes = typeof source === 'string' ? await readFile(source) : source;
    size = bytes.length === 0 ? null : inspectSvg(bytes);
  } else {
    size = await inspectRaster(source, mimeType);
  }
  if (size === null || exceedsPixelLimit(size)) return null;
  return { mimeType, ...size };
}

/** The first bytes of the image: enough for every signature and the GIF header. */
async function leadingBytes(source: Buffer | string): Promise<Buffer> {
  if (typeof source !== 'string') return source.subarray(0, 16);
  const handle = await open(source, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A file is decoded by libvips straight from disk: its bytes never need to be in memory at once. */
async function inspectRaster(
  source: Buffer | string,
  type: RasterType,
): Promise<{ width: number; height: number } | null> {
  const head = await leadingBytes(source);
  // The signature gate keeps other libvips loaders (SVG, PDF, TIFF, HEIF…) away from user bytes.
  if (!SIGNATURES[type](head)) return null;
  // A GIF is shown at its canvas size: one over the pixel limit is refused before any decoding.
  if (type === 'image/gif' && exceedsPixelLimit(gifCanvas(head, { width: 0, height: 0 }))) return null;
  const options = { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' as const, sequentialRead: true };
  const sharp = await loadSharp(); // outside the try: a broken install is a 500, not a "bad image"
  try {
    const metadata = await sharp(source, options).metadata();
    if (metadata.format !== SHARP_FORMATS[type] || !metadata.width || !metadata.height) return null;
    // Headers alone do not prove the pixels are there: decode everything (a truncated file fails
    // here) into a tiny thumbnail, so memory stays small even for a 100 MP image.
    await sharp(source, options).resize(16, 16, { fit: 'inside', kernel: 'nearest' }).raw().toBuffer();
    // EXIF orientations 5–8 are shown rotated by browsers: report the size people see.
    const shown = metadata.autoOrient ?? metadata;
    if (type === 'image/gif')
      return gifCanvas(head, { width: shown.width, height: metadata.pageHeight ?? shown.height });
    return { width: shown.width, height: shown.height };
  } catch {
    return null; // undecodable, truncated, or over the pixel limit
  }
}

const exceedsPixelLimit = (size: { width: number; height: number }) => size.width * size.height > MAX_IMAGE_PIXELS;

/**
 * The size a GIF is displayed at: its logical screen (the canvas every frame is drawn on, bytes
 * 6–9 of the header, little-endian), or the decoder's frame size where that is larger. libvips
 * reports only the first frame for a canvas it considers unreasonable, so a tiny frame on a huge
 * canvas would otherwise pass as a tiny image.
 */
function gifCanvas(bytes: Buffer, frame: { width: number; height: number }): { width: number; height: number } {
  if (bytes.length < 10) return frame;
  return { width: Math.max(bytes.readUInt16LE(6), frame.width), height: Math.max(bytes.readUInt16LE(8), frame.height) };
}
