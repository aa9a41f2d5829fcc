import { Controller, Get, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import jwt from 'jsonwebtoken';
import { createHmac, randomUUID } from 'node:crypto';
import request, { type Response } from 'supertest';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { Access } from '../../src/common/auth/access.decorator.js';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import { CurrentScope } from '../../src/common/auth/current-user.decorator.js';
import type { Role } from '../../src/common/auth/roles.js';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { TEST_JWT_SECRET, type TestApp } from './app.js';

/** Test helpers for auth: forged tokens, cookies, logins, and the role-matrix row type. */

export const b64url = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Claims of a valid access token for `userId` under the test app's config; override any of them. */
export function accessClaims(
  t: TestApp,
  userId: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: String(userId),
    iat: now,
    exp: now + 600,
    iss: t.config.jwtIssuer,
    aud: t.config.jwtAudience,
    jti: randomUUID(),
    token_type: 'access',
    ...overrides,
  };
}

/** Signs claims exactly as given (no defaults added) with jsonwebtoken. */
export function sign(
  claims: Record<string, unknown>,
  options: { algorithm?: jwt.Algorithm; secret?: string | Buffer; header?: Record<string, unknown> } = {},
): string {
  const algorithm = options.algorithm ?? 'HS256';
  return jwt.sign(claims, options.secret ?? TEST_JWT_SECRET, {
    algorithm,
    header: { alg: algorithm, typ: 'JWT', ...options.header } as jwt.JwtHeader,
  });
}

/** Builds a token by hand: any header, HMAC-SHA256 over it with `key` (or a given signature). */
export function handmade(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  key: string | null,
  signature?: string,
): string {
  const input = `${b64url(header)}.${b64url(claims)}`;
  const sig = signature ?? (key === null ? '' : createHmac('sha256', key).update(input).digest('base64url'));
  return `${input}.${sig}`;
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export interface ParsedCookie {
  value: string;
  /** Attribute names lower-cased; flag attributes map to ''. */
  attributes: Record<string, string>;
}

export function setCookie(res: Response, name: string): ParsedCookie | undefined {
  const header = res.headers['set-cookie'] as unknown as string[] | undefined;
  const line = header?.find((c) => c.startsWith(`${name}=`));
  if (!line) return undefined;
  const [pair, ...attrs] = line.split(';').map((p) => p.trim());
  const attributes: Record<string, string> = {};
  for (const attr of attrs) {
    const [k, ...v] = attr.split('=');
    attributes[k.toLowerCase()] = v.join('=');
  }
  return { value: decodeURIComponent(pair.slice(name.length + 1)), attributes };
}

export async function loginJson(
  t: TestApp,
  email: string,
  password: string,
): Promise<{ access: string; refresh: string; res: Response }> {
  const res = await t.http().post('/api/v1/auth/login/json').send({ email, password }).expect(200);
  const cookie = setCookie(res, 'refresh_token');
  if (!cookie) throw new Error('login did not set the refresh cookie');
  return { access: res.body.access_token, refresh: cookie.value, res };
}

export const decode = (token: string) =>
  jwt.decode(token, { complete: true }) as unknown as {
    header: Record<string, unknown>;
    payload: Record<string, unknown>;
  };

/**
 * One row of the role matrix: a route and who may call it. `allowed: 'public'`
 * means no token is needed. `path` is the OpenAPI template (`/api/v1/users/{id}`); path
 * parameters are filled with `params` or else with an id that does not exist, so allowed callers
 * get a 404/422 rather than touching data. `body` is sent as JSON when given.
 */
export interface RoleMatrixRow {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  allowed: readonly Role[] | 'public';
  body?: object;
  params?: Record<string, string | number>;
}

export const MISSING_ID = 2_147_483_000;

export function concretePath(row: RoleMatrixRow): string {
  return row.path.replace(/\{(\w+)\}/g, (_, name: string) => String(row.params?.[name] ?? MISSING_ID));
}

/**
 * The real application plus one probe route that lists the clients visible to the caller through
 * the shared AccessScope SQL condition — proof that the JWT strategy's freshly loaded user (roles,
 * client_list) is what scoping uses. Runs over the given app's database and cache.
 */
@Controller('scope-probe')
class ScopeProbeController {
  constructor(@Inject(Db) private readonly db: Db) {}

  @Get('clients')
  @Access('admin', 'user')
  async clients(@CurrentScope() scope: AccessScope): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT c.id FROM clients c WHERE ${scope.visibleClient('c.id')} ORDER BY c.id`,
    );
    return rows.map((r) => r.id);
  }
}

export async function createScopeProbeApp(
  t: TestApp,
): Promise<{ http: () => ReturnType<typeof request>; close: () => Promise<void> }> {
  @Module({ imports: [AppModule.forRoot(t.config)], controllers: [ScopeProbeController] })
  class ScopeProbeModule {}
  const app = await NestFactory.create(ScopeProbeModule, { logger: false, abortOnError: false });
  configureApp(app, t.config);
  await app.init();
  const server = app.getHttpServer();
  return { http: () => request(server), close: () => app.close() };
}
