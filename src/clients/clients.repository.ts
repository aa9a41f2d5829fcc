import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, empty, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';

export interface ClientRow {
  id: number;
  name: string;
  created_at: Date;
  updated_at: Date;
}

const CLIENT_COLUMNS = raw('c.id, c.name, c.created_at, c.updated_at');

/** SQL for clients. Visibility: a user sees the clients in their client_list (`c.id`). */
@Injectable()
export class ClientsRepository {
  constructor(private readonly db: Db) {}

  list(
    scope: AccessScope,
    filter: { name?: string },
    page: { skip: number; limit: number },
  ): Promise<PagedRows<ClientRow>> {
    const where: Sql[] = [scope.visibleClient('c.id')];
    if (filter.name !== undefined) where.push(sql`strpos(lower(c.name), lower(${filter.name})) > 0`);
    return this.db.replica.page<ClientRow>(
      { columns: CLIENT_COLUMNS, from: sql`clients c`, where, orderBy: sql`c.id` },
      page,
    );
  }

  /** The visible client, optionally locked for an update/delete in the caller's transaction. */
  findById(scope: AccessScope, id: number, lock = false): Promise<ClientRow | null> {
    return this.db.first<ClientRow>(
      sql`SELECT ${CLIENT_COLUMNS} FROM clients c WHERE c.id = ${id} AND ${scope.visibleClient('c.id')}${lock ? sql` FOR UPDATE` : empty}`,
    );
  }

  /**
   * Whether another client already uses the name (case-insensitive, as the unique index
   * clients_name_lower_key). Deliberately unscoped: names are unique across all clients.
   */
  async nameTaken(name: string, exceptId: number | null): Promise<boolean> {
    const row = await this.db.one<{ taken: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM clients WHERE lower(name) = lower(${name}) AND id IS DISTINCT FROM ${exceptId}::int) AS taken`,
    );
    return row.taken;
  }

  /** Writes are admin-only (the controller guards them), so inserts need no scope condition. */
  insert(values: { name: string }): Promise<ClientRow> {
    return this.db.one<ClientRow>(
      sql`INSERT INTO clients AS c (name) VALUES (${values.name}) RETURNING ${CLIENT_COLUMNS}`,
    );
  }

  update(scope: AccessScope, id: number, values: { name?: string }): Promise<ClientRow | null> {
    return this.db.first<ClientRow>(
      sql`UPDATE clients AS c SET name = COALESCE(${values.name ?? null}, c.name), updated_at = now()
        WHERE c.id = ${id} AND ${scope.visibleClient('c.id')} RETURNING ${CLIENT_COLUMNS}`,
    );
  }

  /** What still references the client (brands; runs always come through a brand). */
  async references(id: number): Promise<{ brands: boolean }> {
    return this.db.one<{ brands: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM brands WHERE client_id = ${id}) AS brands`,
    );
  }

  delete(scope: AccessScope, id: number): Promise<ClientRow | null> {
    return this.db.first<ClientRow>(
      sql`DELETE FROM clients AS c WHERE c.id = ${id} AND ${scope.visibleClient('c.id')} RETURNING ${CLIENT_COLUMNS}`,
    );
  }
}
