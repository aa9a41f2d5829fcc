/** The event types a webhook may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'tracker.status_changed',
  'tracker.alert_opened',
  'tracker.alert_resolved',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the delivery POST /webhooks/{id}/test queues. */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
