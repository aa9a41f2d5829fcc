import { IMAGE_ERRORS } from './images.errors.js';

/**
 * The five accepted image types (docs/api.md, "Images") and the wire texts of their errors.
 * One table drives the declared-type check, the signature check and the stored extension.
 */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/svg+xml'] as const;
export type ImageMimeType = (typeof IMAGE_TYPES)[number];

export const INVALID_FILE_TYPE_ERROR = IMAGE_ERRORS.invalidFileType(IMAGE_TYPES.join(', '));
export const INVALID_FILE_TYPE = INVALID_FILE_TYPE_ERROR.detail;

/** Extensions a stored name may keep for each type; the first is the canonical one. */
export const IMAGE_EXTENSIONS: Record<ImageMimeType, readonly string[]> = {
  'image/jpeg': ['jpg', 'jpeg'],
  'image/png': ['png'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
  'image/svg+xml': ['svg'],
};

/** More pixels than this is refused: the decode cost and memory of such an image is the attack. */
export const MAX_IMAGE_PIXELS = 100_000_000;

/**
 * The declared part type, normalised (`Image/PNG; charset=x` → `image/png`), or null when it is
 * not one of the five. Aliases such as image/jpg are not accepted: the API lists exact types.
 */
export function acceptedMimeType(declared: string | undefined): ImageMimeType | null {
  const type = (declared ?? '').split(';')[0].trim().toLowerCase();
  return (IMAGE_TYPES as readonly string[]).includes(type) ? (type as ImageMimeType) : null;
}
