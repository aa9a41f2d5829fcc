import { catalogueError as e } from '../common/errors/catalogue-error.js';

/** Errors of webhooks and their delivery log. */
export const WEBHOOK_ERRORS = {
  webhookNotFound: e('WEBHOOK_NOT_FOUND', 404, 'Webhook not found', { summary: "Missing, or another user's" }),
  deliveryNotFound: e('WEBHOOK_DELIVERY_NOT_FOUND', 404, 'Delivery not found', {
    summary: 'Missing, or a delivery of another webhook',
  }),
  webhookDisabled: e('WEBHOOK_DISABLED', 409, 'Webhook is disabled', {
    summary: 'The webhook is disabled (is_active false): enable it first',
  }),
} as const;
