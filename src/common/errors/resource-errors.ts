import { catalogueError as e } from './catalogue-error.js';

/**
 * Errors any feature's resources can answer: a delete refused while other rows point at the
 * resource (409) and an upload over its route's limit (413). The errors of one feature are
 * declared in its own folder (`<feature>.errors.ts`).
 */
export const RESOURCE_ERRORS = {
  /** A delete refused while other rows point at the resource: "Brand is still referenced by production runs". */
  stillReferencedBy: (resource = 'Resource', what = 'other resources') =>
    e('STILL_REFERENCED_BY', 409, `${resource} is still referenced by ${what}`),
  /** An uploaded file over its route's limit, the limit written for people ("10 MB"). */
  fileOverLimit: (limit = '10 MB') => e('FILE_OVER_LIMIT', 413, `File too large. Maximum size is ${limit}`),
} as const;
