import { ApiExtension } from '@nestjs/swagger';

type Json = Record<string, unknown>;

const EXTENSION = 'x-outgoing-webhooks';

/**
 * Documents requests the service itself sends (OpenAPI 3.1 `webhooks`: name → path item), declared
 * on the route that subscribes to them: `@OutgoingWebhooks({ 'tracker.status_changed': { post: … } })`.
 * Their bodies refer to component schemas the controller registers with `@ApiExtraModels`.
 */
export function OutgoingWebhooks(webhooks: Record<string, Json>): MethodDecorator {
  return ApiExtension(EXTENSION, webhooks);
}

/** Moves every operation's outgoing webhooks to the document's top-level `webhooks`. */
export function applyOutgoingWebhooks(document: Json): void {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(item) as Json[]) {
      const webhooks = operation?.[EXTENSION] as Json | undefined;
      if (webhooks === undefined) continue;
      delete operation[EXTENSION];
      Object.assign((document.webhooks ??= {}) as Json, webhooks);
    }
  }
}
