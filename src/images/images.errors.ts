import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of images and their uploads. */
export const IMAGE_ERRORS = {
  imageNotFound: e('IMAGE_NOT_FOUND', 404, 'Image not found'),
  invalidFileType: (allowed = 'image/jpeg, image/png, image/gif, image/webp, image/svg+xml') =>
    e('INVALID_FILE_TYPE', 400, `Invalid file type. Allowed types: ${allowed}`, {
      summary: 'Type not accepted, content not of the declared type, undecodable/truncated, or over 100 megapixels',
    }),
} as const;
