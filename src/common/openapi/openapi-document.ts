import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_KEY_SCHEME, BEARER_SCHEME } from '../auth/access.decorator.js';
import { ERROR_SCHEMAS } from '../errors/error-catalogue.js';
import { applyDocumentedPaths } from './documented-path.js';
import { documentErrors } from './error-responses.js';
import { boundIntegers, everySchema, toJsonSchema2020 } from './openapi-31.js';
import { applyOutgoingWebhooks } from './outgoing-webhooks.js';

type Json = Record<string, unknown>;

const TAGS: Record<string, string> = {
  auth: 'Log in, refresh and revoke tokens',
  users: 'Accounts, roles and the clients each user may see',
  clients: 'Clients (brand owners)',
  brands: 'Brands of a client',
  'production-runs': 'Production runs of a brand',
  'storage-locations': 'Storage locations and the trackers stored there',
  'delivery-locations': 'Delivery locations and the trackers bound for them',
  trackers: 'Trackers, their status history and CSV import',
  locations: 'Location reports and the aggregated location history',
  analytics: 'Journey analytics of a production run',
  images: 'Image upload, metadata and public bytes',
  alerts: 'Silent, overdue and low-battery trackers: open and resolved alerts',
  webhooks: 'Outgoing webhooks: subscriptions, signing secrets, test and retry, the delivery log',
  health: 'Health checks',
  metrics: 'Prometheus metrics',
  'api-keys': 'API keys of machine clients (managed with a person’s token)',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/**
 * The service's OpenAPI 3.1 document, built from the controllers' decorators and then finished in
 * one place (finishDocument) with what holds for every route. Served at /openapi.json and written
 * to a file by scripts/openapi.mjs.
 */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Tracker Pipeline Service')
      .setDescription('Trackers through production runs: status history, location aggregation, analytics, images.')
      .setVersion('1')
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An access token from POST /api/v1/auth/login. JWTs follow the RFC8725 best practices: HS256 only (alg none refused), iss, aud, exp and token_type verified, revocable by jti.',
        },
        BEARER_SCHEME,
      )
      .addApiKey(
        {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'An API key (`tps_<prefix>_<secret>`, from POST /api/v1/api-keys) for machine clients; it may also be sent as `Authorization: Bearer tps_…`. It acts as its owner narrowed by its scopes and clients. Routes that list only the bearer scheme (users, API keys, auth) refuse keys with 403.',
        },
        API_KEY_SCHEME,
      )
      .build(),
    // `clientsList`, `trackersCreate`, `imagesUpload`: generated clients name their methods so.
    {
      operationIdFactory: (controller, method) =>
        `${lowerFirst(controller.replace(/Controller$/, ''))}${upperFirst(method)}`,
      autoTagControllers: false,
    },
  );
  finishDocument(document as unknown as Json);
  return document;
}

/** What holds for every route, applied once to the whole document. */
function finishDocument(document: Json): void {
  document.openapi = '3.1.0';
  // Relative: the document describes whichever deployment serves it (production, staging or a
  // development instance); the API is meant for the dashboard and integrations, not internal-only.
  document.servers = [
    {
      url: '/',
      description: 'This deployment (production, staging or development); paths are absolute from its root',
      'x-internal': false,
    },
  ];
  applyDocumentedPaths(document);
  applyOutgoingWebhooks(document);
  const components = (document.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Json;
  Object.assign(schemas, structuredClone(ERROR_SCHEMAS));
  const tags = new Set<string>();
  for (const operation of operations(document)) {
    // No security requirement of its own: public (login, refresh, image bytes, metrics' own token).
    operation.security ??= [];
    documentErrors(operation);
    for (const tag of (operation.tags ?? []) as string[]) tags.add(tag);
  }
  document.tags = [...tags].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
  (document.info as Json).license = { name: 'UNLICENSED', identifier: 'UNLICENSED' };
  moveRequestDefaults(document, schemas);
  everySchema(document, toJsonSchema2020);
  everySchema(document, boundIntegers);
}

function operations(document: Json): Json[] {
  return Object.values((document.paths ?? {}) as Record<string, Json>).flatMap((item) =>
    METHODS.map((method) => item[method] as Json | undefined).filter((op): op is Json => op !== undefined),
  );
}

/**
 * A `default` in a request body documents what the server does when the field is left out, not
 * a value the client must send; generated clients read it as "always present" and make the field
 * required. In a create (POST) body the default is therefore stated in the description; an
 * update (PUT/PATCH) changes only the fields it sends, so its body has no defaults at all.
 */
function moveRequestDefaults(document: Json, schemas: Json): void {
  const visit = (schema: unknown, seen: Set<string>, update: boolean): void => {
    if (typeof schema !== 'object' || schema === null) return;
    const s = schema as Json;
    if (typeof s.$ref === 'string') {
      const name = s.$ref.split('/').pop()!;
      if (seen.has(name)) return;
      seen.add(name);
      visit(schemas[name], seen, update);
      return;
    }
    if ('default' in s) {
      const text = `Default: \`${JSON.stringify(s.default)}\`.`;
      if (!update) s.description = s.description ? `${String(s.description).replace(/\.?$/, '.')} ${text}` : text;
      delete s.default;
    }
    for (const key of ['items', 'additionalProperties']) visit(s[key], seen, update);
    for (const key of ['allOf', 'oneOf', 'anyOf'])
      for (const sub of (s[key] as unknown[] | undefined) ?? []) visit(sub, seen, update);
    for (const property of Object.values((s.properties ?? {}) as Json)) visit(property, seen, update);
  };
  const seen = { create: new Set<string>(), update: new Set<string>() };
  for (const path of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = path[method] as Json | undefined;
      const content = ((operation?.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      const update = method === 'put' || method === 'patch';
      for (const media of Object.values(content)) visit(media.schema, update ? seen.update : seen.create, update);
    }
  }
}
