import { Injectable } from '@nestjs/common';
import type { ApiKeyScope } from '../common/auth/auth-user.js';
import { Db, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';

export interface ApiKeyRow {
  id: number;
  user_id: number;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[];
  client_ids: number[] | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** What authenticating with a key needs (never leaves the module). */
export interface ApiKeyCredentialRow {
  id: number;
  user_id: number;
  secret_hash: Buffer;
  scopes: ApiKeyScope[];
  client_ids: number[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

/** Whose keys a caller sees: their own, or (an admin) everyone's. */
export interface KeyViewer {
  userId: number;
  all: boolean;
}

const COLUMNS = raw(
  'k.id, k.user_id, k.name, k.prefix, k.scopes, k.client_ids, k.created_at, k.expires_at, k.last_used_at, k.revoked_at',
);

const visible = (viewer: KeyViewer): Sql => (viewer.all ? raw('TRUE') : sql`k.user_id = ${viewer.userId}`);

/** SQL of API keys. Visibility: a user sees their own keys (`k.user_id`), an admin every key. */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  /** Inserts a key; a taken prefix fails with a unique violation on api_keys_prefix_key (the caller draws again). */
  insert(values: {
    userId: number;
    name: string;
    prefix: string;
    secretHash: Buffer;
    scopes: ApiKeyScope[];
    clientIds: number[] | null;
    expiresAt: Date | null;
  }): Promise<ApiKeyRow> {
    return this.db.one<ApiKeyRow>(
      sql`INSERT INTO api_keys AS k (user_id, name, prefix, secret_hash, scopes, client_ids, expires_at)
          VALUES (${values.userId}, ${values.name}, ${values.prefix}, ${values.secretHash}, ${values.scopes}::text[],
                  ${values.clientIds}::int[], ${values.expiresAt})
          RETURNING ${COLUMNS}`,
    );
  }

  list(
    viewer: KeyViewer,
    filter: { userId?: number },
    page: { skip: number; limit: number },
  ): Promise<PagedRows<ApiKeyRow>> {
    const where: Sql[] = [visible(viewer)];
    if (filter.userId !== undefined) where.push(sql`k.user_id = ${filter.userId}`);
    return this.db.page<ApiKeyRow>({ columns: COLUMNS, from: sql`api_keys k`, where, orderBy: sql`k.id` }, page);
  }

  findById(viewer: KeyViewer, id: number): Promise<ApiKeyRow | null> {
    return this.db.first<ApiKeyRow>(sql`SELECT ${COLUMNS} FROM api_keys k WHERE k.id = ${id} AND ${visible(viewer)}`);
  }

  /** Revokes the visible key; a revoked key keeps its first `revoked_at`. */
  revoke(viewer: KeyViewer, id: number): Promise<ApiKeyRow | null> {
    return this.db.first<ApiKeyRow>(
      sql`UPDATE api_keys AS k SET revoked_at = COALESCE(k.revoked_at, now())
          WHERE k.id = ${id} AND ${visible(viewer)} RETURNING ${COLUMNS}`,
    );
  }

  /** The key with this prefix, whatever its state (read when the in-process tier does not hold it). */
  credentialByPrefix(prefix: string): Promise<ApiKeyCredentialRow | null> {
    return this.db.first<ApiKeyCredentialRow>(
      sql`SELECT id, user_id, secret_hash, scopes, client_ids, expires_at, revoked_at FROM api_keys WHERE prefix = ${prefix}`,
    );
  }

  /** The user a key is created for, when it exists: its roles decide which clients it may name. */
  findOwner(userId: number): Promise<{ id: number; roles: string[] } | null> {
    return this.db.first<{ id: number; roles: string[] }>(sql`SELECT id, roles FROM users WHERE id = ${userId}`);
  }

  /**
   * Of `clientIds`, those that are not an existing client the owner can see (an admin owner: any
   * existing client; a user: the clients of their client_list), in ascending order.
   */
  async clientsNotVisibleTo(ownerId: number, clientIds: number[]): Promise<number[]> {
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT x.id FROM unnest(${clientIds}::int[]) AS x(id)
          WHERE NOT EXISTS (SELECT 1 FROM clients c JOIN users u ON u.id = ${ownerId}
                             WHERE c.id = x.id AND ('admin' = ANY(u.roles) OR c.id = ANY(u.client_list)))
          ORDER BY x.id`,
    );
    return rows.map((r) => r.id);
  }

  /**
   * Records when keys were last used, in one statement for a whole batch; never moves a key's
   * `last_used_at` back (another instance may have recorded a later use).
   */
  markUsed(ids: number[], usedAt: Date[]): Promise<number> {
    return this.db.execute(
      sql`UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, u.used_at)
          FROM unnest(${ids}::int[], ${usedAt}::timestamptz[]) AS u(id, used_at)
          WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at)`,
    );
  }
}
