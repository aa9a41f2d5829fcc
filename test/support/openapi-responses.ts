import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Application, Request, Response } from 'express';
import { AppModule } from '../../src/app.module.js';
import { setGlobalPrefix } from '../../src/app.setup.js';
import type { AppConfig } from '../../src/common/config/app-config.js';
import { ExpressHttpAdapter } from '../../src/infrastructure/http/express-http-adapter.js';
import { createOpenApiDocument } from '../../src/common/openapi/openapi-document.js';

/*
 * Every JSON body the test apps send is checked against the OpenAPI document: the operation
 * whose method and path template match the request, and the response of that status. A body
 * that does not fit, or a status the operation does not document, is recorded as a violation;
 * createTestApp's close() fails the test file when there are any. Drift between the document and
 * the service is then caught by whichever test meets it. The document is the application's own
 * (built once per test file, as scripts/openapi.mjs does), so routes it does not have (unknown
 * paths, test-only controllers mounted beside it) are not checked.
 */

type Json = Record<string, unknown>;
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  /** Literal characters in the template: the more, the more specific (`/trackers/status-counts` over `/trackers/{id}`). */
  weight: number;
  operation: Operation;
}

const DOCUMENT_ID = 'https://tracker-pipeline.test/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

let shared: { routes: Route[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

/** The checker's document and compiled validators, shared by the apps of one test file. */
async function load(config: AppConfig) {
  if (shared) return shared;
  const preview = await NestFactory.create(AppModule.forRoot(config), new ExpressHttpAdapter(), {
    preview: true,
    logger: false,
  });
  setGlobalPrefix(preview);
  const document = createOpenApiDocument(preview) as unknown as Json & {
    paths: Record<string, Record<string, Operation>>;
  };
  await preview.close();
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const routes = Object.entries(document.paths).flatMap(([template, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(
        `^${template
          .split(/\{[^}]+\}/)
          .map(escapeRegExp)
          .join('[^/]+')}$`,
      ),
      weight: template.replace(/\{[^}]+\}/g, '').length,
      operation: item[method],
    })),
  );
  shared = { routes, ajv, validators: new Map() };
  return shared;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The check of one app: installs itself on the app's responses and collects what it finds. */
export class ResponseChecker {
  readonly violations: string[] = [];
  checked = 0;

  private readonly routes: Route[];
  private readonly ajv: Ajv2020;
  private readonly validators: Map<string, ValidateFunction>;

  /** Installs the check on the app's JSON responses. */
  static async install(app: INestApplication, config: AppConfig, enabled = true): Promise<ResponseChecker> {
    return new ResponseChecker(app, await load(config), enabled);
  }

  private constructor(app: INestApplication, loaded: NonNullable<typeof shared>, enabled: boolean) {
    ({ routes: this.routes, ajv: this.ajv, validators: this.validators } = loaded);
    if (!enabled) return;
    const express = app.getHttpAdapter().getInstance() as Application & { response: Response };
    const original = express.response.json;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const checker = this;
    const originalSend = express.response.send;
    const checked = new WeakSet<Response>();
    const checkBody = (res: Response, body: unknown) => {
      const req = res.req as Request;
      const path = req.originalUrl.split('?')[0];
      try {
        const problem = checker.problemWith(req.method, path, res.statusCode, body);
        if (problem) checker.violations.push(`${req.method} ${path} → ${res.statusCode} ${problem}`);
      } catch (error) {
        checker.violations.push(`${req.method} ${path} → ${res.statusCode}: response check failed: ${String(error)}`);
      }
    };
    express.response.json = function (this: Response, body: unknown) {
      checkBody(this, body);
      checked.add(this);
      return original.call(this, body);
    };
    // Cached answers are sent as finished JSON text (res.send with a JSON content type): checked too.
    express.response.send = function (this: Response, body?: unknown) {
      const type = this.getHeader('Content-Type');
      if (
        !checked.has(this) &&
        typeof body === 'string' &&
        typeof type === 'string' &&
        type.startsWith('application/json')
      ) {
        checked.add(this);
        checkBody(this, JSON.parse(body) as unknown);
      }
      return originalSend.call(this, body);
    };
  }

  /**
   * What is wrong with this JSON answer according to the document, or undefined when it fits
   * (or the document has no such route).
   */
  problemWith(method: string, path: string, status: number, body: unknown): string | undefined {
    const route = this.routes
      .filter((r) => r.method === method && r.pattern.test(path))
      .sort((a, b) => b.weight - a.weight)[0];
    if (!route) return undefined;
    this.checked++;
    const problem = check(route, status, body, this.ajv, this.validators);
    return problem && `(documented as ${method} ${route.template}): ${problem}`;
  }

  /** Throws, listing every violation, when any was recorded. */
  assertClean(): void {
    if (this.violations.length === 0) return;
    const list = [...new Set(this.violations)];
    throw new Error(`${list.length} response(s) do not match the OpenAPI document:\n  ${list.join('\n  ')}`);
  }
}

function check(
  route: Route,
  status: number,
  body: unknown,
  ajv: Ajv2020,
  validators: Map<string, ValidateFunction>,
): string | undefined {
  const responses = route.operation.responses ?? {};
  const key = responses[status]
    ? String(status)
    : responses[`${String(status)[0]}XX`]
      ? `${String(status)[0]}XX`
      : responses.default
        ? 'default'
        : undefined;
  if (!key) return `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`;
  const content = responses[key].content ?? {};
  if (!content['application/json']?.schema)
    return `no JSON body documented for ${key} (documented: ${Object.keys(content).join(', ') || 'no body'})`;
  const ref = `${DOCUMENT_ID}#/${pointer('paths', route.template, route.method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema')}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  if (validate(body)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} [${e.schemaPath}]`);
  return `${errors.join('; ')} — body ${JSON.stringify(body).slice(0, 300)}`;
}
