import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of share links and their public view. */
export const SHARE_LINK_ERRORS = {
  shareLinkNotFound: e('SHARE_LINK_NOT_FOUND', 404, 'Share link not found', {
    summary: "Unknown, expired or revoked link; for management: missing, or another user's link (for a non-admin)",
  }),
  tooManyPublicRequests: e('TOO_MANY_PUBLIC_REQUESTS', 429, 'Too many requests. Try again later.', {
    summary:
      'More than PUBLIC_TRACK_REQUESTS_PER_MINUTE (60) requests a minute from one client IP (sent with Retry-After)',
  }),
} as const;
