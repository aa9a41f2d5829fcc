import { randomUUID } from 'node:crypto';
import { IMAGE_EXTENSIONS, type ImageMimeType } from './image-types.js';

const MAX_ORIGINAL_FILENAME = 255;
const FALLBACK_FILENAME = 'upload';

/**
 * C0/C1 controls (NUL included), DEL, and the bidirectional overrides/isolates that can make
 * `gpj.exe` display as `exe.jpg` in a UI.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The client's file name, reduced to something safe to store and show: base name only (any
 * `/` or `\` path, `..` included, is dropped), control characters removed, at most 255 UTF-16
 * units without splitting a character, extension kept when shortening. Never used as a path.
 */
export function sanitizeOriginalFilename(name: string | undefined): string {
  const base = (name ?? '').normalize('NFC').replace(UNSAFE_CHARACTERS, '').split(/[/\\]/).pop() ?? '';
  const trimmed = base.trim();
  if (trimmed === '' || /^\.+$/.test(trimmed)) return FALLBACK_FILENAME;
  return truncateKeepingExtension(trimmed, MAX_ORIGINAL_FILENAME);
}

function truncateKeepingExtension(name: string, max: number): string {
  if (name.length <= max) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  const stem = Array.from(extension ? name.slice(0, dot) : name);
  while (stem.join('').length + extension.length > max) stem.pop();
  return stem.join('') + extension;
}

/**
 * A fresh stored name: random UUID + the original extension (lower-cased) when it fits the
 * detected type, else the type's canonical extension. Nothing else of the client's name is used.
 */
export function newStorageFilename(originalFilename: string, type: ImageMimeType): string {
  const allowed = IMAGE_EXTENSIONS[type];
  const dot = originalFilename.lastIndexOf('.');
  const given = dot >= 0 ? originalFilename.slice(dot + 1).toLowerCase() : '';
  return `${randomUUID()}.${allowed.includes(given) ? given : allowed[0]}`;
}

const ALL_EXTENSIONS = [...new Set(Object.values(IMAGE_EXTENSIONS).flat())].join('|');

/** Exactly the names newStorageFilename produces; anything else is never looked up. */
const STORAGE_FILENAME_PATTERN = new RegExp(
  `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.(?:${ALL_EXTENSIONS})$`,
);

export function isStorageFilename(value: string): boolean {
  return STORAGE_FILENAME_PATTERN.test(value);
}

/** `10485760` → `10 MB`, `2000` → `1.95 KB`: the size limit as people read it (binary units). */
export function formatByteSize(bytes: number): string {
  const units: [string, number][] = [
    ['GB', 1024 ** 3],
    ['MB', 1024 ** 2],
    ['KB', 1024],
  ];
  for (const [unit, factor] of units) {
    if (bytes >= factor) return `${Number((bytes / factor).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}
