import { WEBHOOK_TEST_TYPE } from './dto/webhook-event-types.js';

type Json = Record<string, unknown>;

const HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The delivery id (decimal): the same on every attempt of a delivery. Deduplicate on it.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt. Refuse a timestamp far from your clock (e.g. more than 5 minutes).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the base64-decoded part of the secret after `whsec_` (Standard Webhooks). For 24 hours after a secret rotation two signatures, space-separated: one per secret; accept the delivery when any matches.',
    schema: { type: 'string' },
  },
];

const RESPONSES = {
  '200': { description: 'Any 2xx answered within 10 s: delivered. The body is not read beyond 64 kB.' },
  '410': { description: 'Gone: the delivery fails and the webhook is disabled at once.' },
  default: {
    description:
      'Anything else (another status, a redirect — never followed —, no answer within 10 s): retried after 20 s, then doubling up to 1 hour between attempts, for 24 hours.',
  },
};

function operation(name: string, summary: string, schema: string): Json {
  return {
    post: {
      operationId: `webhook${name}`,
      summary,
      tags: ['webhooks'],
      security: [],
      parameters: HEADERS,
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
      },
      responses: RESPONSES,
    },
  };
}

/** The requests this service POSTs to a webhook's URL, for the document's top-level `webhooks`. */
export const WEBHOOK_PAYLOAD_DOCS: Record<string, Json> = {
  'tracker.status_changed': operation(
    'TrackerStatusChanged',
    "A tracker's current status, storage location or destination changed (sent to webhooks subscribed to tracker.status_changed)",
    'WebhookStatusChangedPayload',
  ),
  'tracker.alert_opened': operation(
    'TrackerAlertOpened',
    'A tracker became silent, overdue or low on battery (sent to webhooks subscribed to tracker.alert_opened)',
    'WebhookAlertPayload',
  ),
  'tracker.alert_resolved': operation(
    'TrackerAlertResolved',
    "A tracker's alert ended: its condition no longer holds (sent to webhooks subscribed to tracker.alert_resolved)",
    'WebhookAlertPayload',
  ),
  [WEBHOOK_TEST_TYPE]: operation(
    'Test',
    'A test delivery queued with POST /api/v1/webhooks/{id}/test',
    'WebhookTestPayload',
  ),
};
