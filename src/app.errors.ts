import { ANALYTICS_ERRORS } from './analytics/analytics.errors.js';
import { API_KEY_ERRORS } from './api-keys/api-keys.errors.js';
import { AUTH_LOGIN_ERRORS } from './auth/auth.errors.js';
import { BRAND_ERRORS } from './brands/brands.errors.js';
import { CLIENT_ERRORS } from './clients/clients.errors.js';
import { ERRORS, type CatalogueError, type CatalogueErrorBuilder } from './common/errors/error-catalogue.js';
import { DEVICE_ERRORS } from './devices/devices.errors.js';
import { IMAGE_ERRORS } from './images/images.errors.js';
import { NOTIFICATION_ERRORS } from './notifications/notifications.errors.js';
import { PLACE_ERRORS } from './places/places.errors.js';
import { PRODUCTION_RUN_ERRORS } from './production-runs/production-runs.errors.js';
import { SHARE_LINK_ERRORS } from './share-links/share-links.errors.js';
import { TRACKER_ERRORS } from './tracker-states/trackers.errors.js';
import { USER_ERRORS } from './users/users.errors.js';
import { WEBHOOK_ERRORS } from './webhooks/webhooks.errors.js';

/** The error groups: the cross-cutting ones of src/common, then each feature's own `<feature>.errors.ts`. */
export const ERROR_GROUPS = {
  common: ERRORS,
  auth: AUTH_LOGIN_ERRORS,
  users: USER_ERRORS,
  clients: CLIENT_ERRORS,
  brands: BRAND_ERRORS,
  productionRuns: PRODUCTION_RUN_ERRORS,
  places: PLACE_ERRORS,
  trackers: TRACKER_ERRORS,
  devices: DEVICE_ERRORS,
  images: IMAGE_ERRORS,
  notifications: NOTIFICATION_ERRORS,
  analytics: ANALYTICS_ERRORS,
  apiKeys: API_KEY_ERRORS,
  webhooks: WEBHOOK_ERRORS,
  shareLinks: SHARE_LINK_ERRORS,
} as const;

/**
 * Every error the service answers, assembled at the application level: src/common declares the
 * errors of the HTTP layer and the guard, each feature declares its own, and nothing below the
 * application imports this catalogue (common imports no feature). Services throw the entries of
 * their feature's group as DomainError and routes document them with ApiErrors.
 */
export const ERROR_CATALOGUE = {
  ...ERROR_GROUPS.common,
  ...ERROR_GROUPS.auth,
  ...ERROR_GROUPS.users,
  ...ERROR_GROUPS.clients,
  ...ERROR_GROUPS.brands,
  ...ERROR_GROUPS.productionRuns,
  ...ERROR_GROUPS.places,
  ...ERROR_GROUPS.trackers,
  ...ERROR_GROUPS.devices,
  ...ERROR_GROUPS.images,
  ...ERROR_GROUPS.notifications,
  ...ERROR_GROUPS.analytics,
  ...ERROR_GROUPS.apiKeys,
  ...ERROR_GROUPS.webhooks,
  ...ERROR_GROUPS.shareLinks,
} as const satisfies Record<string, CatalogueError | CatalogueErrorBuilder>;
