import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';

export interface ClientRow {
  id: number;
  name: string;
  created_at: Date;
  updated_at: Date;
}

const CLIENT_COLUMNS = 'c.id, c.name, c.created_at, c.updated_at';

/**
 * SQL for clients. Visibility: a user sees the clients in their client_list (`c.id`).
 * Methods taking `m` run inside the caller's transaction (defaults to the pool).
 */
@Injectable()
export class ClientsRepository {
  constructor(private readonly db: DataSource) {}

  async list(
    scope: AccessScope,
    filter: { name?: string },
    page: { skip: number; limit: number },
  ): Promise<{ rows: ClientRow[]; total: number }> {
    const params: unknown[] = [];
    const where = [scope.clientFilter('c.id', params)];
    if (filter.name !== undefined) {
      params.push(filter.name);
      where.push(`strpos(lower(c.name), lower($${params.length})) > 0`);
    }
    const condition = where.join(' AND ');
    const [rows, [{ total }]] = await Promise.all([
      this.db.query<ClientRow[]>(
        `SELECT ${CLIENT_COLUMNS} FROM clients c WHERE ${condition} ORDER BY c.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, page.limit, page.skip],
      ),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM clients c WHERE ${condition}`, params),
    ]);
    return { rows, total };
  }

  /** The visible client, optionally locked for an update/delete in the caller's transaction. */
  async findById(scope: AccessScope, id: number, m: EntityManager = this.db.manager, lock = false): Promise<ClientRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<ClientRow[]>(
      `SELECT ${CLIENT_COLUMNS} FROM clients c WHERE c.id = $1 AND ${scope.clientFilter('c.id', params)}${lock ? ' FOR UPDATE' : ''}`,
      params,
    );
    return rows[0] ?? null;
  }

  /**
   * Whether another client already uses the name (case-insensitive, as the unique index
   * clients_name_lower_key). Deliberately unscoped: names are unique across all clients.
   */
  async nameTaken(_scope: AccessScope, name: string, exceptId: number | null, m: EntityManager = this.db.manager): Promise<boolean> {
    const rows = await m.query<{ taken: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM clients WHERE lower(name) = lower($1) AND id IS DISTINCT FROM $2::int) AS taken`,
      [name, exceptId],
    );
    return rows[0].taken;
  }

  /** Writes are admin-only (the controller guards them), so inserts need no scope condition. */
  async insert(_scope: AccessScope, values: { name: string }, m: EntityManager = this.db.manager): Promise<ClientRow> {
    const rows = await m.query<ClientRow[]>(`INSERT INTO clients AS c (name) VALUES ($1) RETURNING ${CLIENT_COLUMNS}`, [values.name]);
    return rows[0];
  }

  async update(scope: AccessScope, id: number, values: { name?: string }, m: EntityManager = this.db.manager): Promise<ClientRow | null> {
    const params: unknown[] = [id, values.name ?? null];
    const rows = await m.query<[ClientRow[], number]>(
      `UPDATE clients AS c SET name = COALESCE($2, c.name), updated_at = now()
        WHERE c.id = $1 AND ${scope.clientFilter('c.id', params)} RETURNING ${CLIENT_COLUMNS}`,
      params,
    );
    return rows[0][0] ?? null;
  }

  /** What still references the client (brands; runs always come through a brand). */
  async references(_scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<{ brands: boolean }> {
    const rows = await m.query<{ brands: boolean }[]>(`SELECT EXISTS (SELECT 1 FROM brands WHERE client_id = $1) AS brands`, [id]);
    return rows[0];
  }

  async delete(scope: AccessScope, id: number, m: EntityManager = this.db.manager): Promise<ClientRow | null> {
    const params: unknown[] = [id];
    const rows = await m.query<[ClientRow[], number]>(
      `DELETE FROM clients AS c WHERE c.id = $1 AND ${scope.clientFilter('c.id', params)} RETURNING ${CLIENT_COLUMNS}`,
      params,
    );
    return rows[0][0] ?? null;
  }
}
