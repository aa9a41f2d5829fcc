import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import type { Role } from '../common/auth/roles.js';
import { PreparedQueries } from '../infrastructure/database/prepared-queries.js';
import { raw, sql } from '../infrastructure/database/db.js';
import { preciseNowMicros } from '../auth/token.service.js';

export interface UserRow {
  id: number;
  name: string;
  email: string;
  roles: Role[];
  client_list: number[];
  notify_email: boolean;
  notify_ui: boolean;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface UserPatch {
  name?: string;
  email?: string;
  passwordHash?: string;
  roles?: Role[];
  clientList?: number[];
  notifyEmail?: boolean;
  notifyUi?: boolean;
  isActive?: boolean;
}

/** The row the JWT strategy reads: with the token epoch in microseconds (null: none). */
export type ActiveUserRow = UserRow & { tokens_valid_after_us: number | null };

/** The data source itself or a transaction's manager. */
export type Queryable = Pick<EntityManager, 'query'>;

/** Another user already has this e-mail (compared case-insensitively by a unique index). */
export class EmailTakenError extends Error {
  constructor() {
    super('A user with this email already exists');
  }
}

export const USER_COLUMNS = 'id, name, email, roles, client_list, notify_email, notify_ui, is_active, created_at, updated_at';

const PATCH_COLUMNS: Record<keyof UserPatch, string> = {
  name: 'name',
  email: 'email',
  passwordHash: 'password_hash',
  roles: 'roles',
  clientList: 'client_list',
  notifyEmail: 'notify_email',
  notifyUi: 'notify_ui',
  isActive: 'is_active',
};

/**
 * SQL for users. Users are global (not client-scoped): only admin routes and the caller's own
 * `/users/me` reach them, so there is no AccessScope argument here. The password hash is only
 * read by the two methods named for it.
 */
@Injectable()
export class UsersRepository {
  constructor(
    private readonly db: DataSource,
    private readonly prepared: PreparedQueries,
  ) {}

  async findById(id: number, q: Queryable = this.db): Promise<UserRow | null> {
    const rows = await q.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** Read on every authenticated request (contract §1), hence a prepared statement. */
  async findActiveById(id: number): Promise<ActiveUserRow | null> {
    const rows = await this.prepared.rows<UserRow & { tokens_valid_after_us: string | null }>(
      sql`SELECT ${raw(USER_COLUMNS)}, (extract(epoch FROM tokens_valid_after) * 1000000)::bigint AS tokens_valid_after_us
         FROM users WHERE id = ${id} AND is_active`,
    );
    const row = rows[0];
    if (!row) return null;
    return { ...row, tokens_valid_after_us: row.tokens_valid_after_us === null ? null : Number(row.tokens_valid_after_us) };
  }

  async findByEmailWithHash(email: string): Promise<(UserRow & { password_hash: string }) | null> {
    const rows = await this.db.query<(UserRow & { password_hash: string })[]>(
      `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`,
      [email],
    );
    return rows[0] ?? null;
  }

  async findPasswordHash(id: number): Promise<string | null> {
    const rows = await this.db.query<{ password_hash: string }[]>('SELECT password_hash FROM users WHERE id = $1', [id]);
    return rows[0]?.password_hash ?? null;
  }

  async page(skip: number, limit: number): Promise<{ rows: UserRow[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      this.db.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users ORDER BY id OFFSET $1 LIMIT $2`, [skip, limit]),
      this.db.query<{ total: number }[]>('SELECT count(*)::int AS total FROM users'),
    ]);
    return { rows, total };
  }

  /** Inserts a user; throws EmailTakenError when the e-mail is taken (race-free: the unique index decides). */
  async insert(user: {
    name: string;
    email: string;
    passwordHash: string;
    roles: Role[];
    clientList: number[];
    notifyEmail?: boolean;
    notifyUi?: boolean;
    isActive?: boolean;
  }): Promise<UserRow> {
    const rows = await this.db.query<UserRow[]>(
      `INSERT INTO users (name, email, password_hash, roles, client_list, notify_email, notify_ui, is_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT ((lower(email))) DO NOTHING
       RETURNING ${USER_COLUMNS}`,
      [
        user.name,
        user.email,
        user.passwordHash,
        user.roles,
        user.clientList,
        user.notifyEmail ?? true,
        user.notifyUi ?? true,
        user.isActive ?? true,
      ],
    );
    if (rows.length === 0) throw new EmailTakenError();
    return rows[0];
  }

  /**
   * Applies the given fields; null when the user does not exist; EmailTakenError on a duplicate
   * e-mail. A new password or a deactivation also moves the token epoch to now: every token
   * issued to the user before is refused from then on (the one that made the change included).
   */
  async update(id: number, patch: UserPatch, q: Queryable = this.db): Promise<UserRow | null> {
    const params: unknown[] = [id];
    const sets = (Object.keys(PATCH_COLUMNS) as (keyof UserPatch)[])
      .filter((field) => patch[field] !== undefined)
      .map((field) => {
        params.push(patch[field]);
        return `${PATCH_COLUMNS[field]} = $${params.length}`;
      });
    if (patch.passwordHash !== undefined || patch.isActive === false) {
      params.push(String(preciseNowMicros()));
      sets.push(`tokens_valid_after = 'epoch'::timestamptz + $${params.length}::bigint * interval '1 microsecond'`);
    }
    try {
      const rows = await q.query<[UserRow[], number]>(
        `UPDATE users SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${USER_COLUMNS}`,
        params,
      );
      // TypeORM's postgres driver answers UPDATE … RETURNING with [rows, affectedCount].
      return rows[0][0] ?? null;
    } catch (error) {
      if (isEmailConflict(error)) throw new EmailTakenError();
      throw error;
    }
  }

  async delete(id: number, q: Queryable = this.db): Promise<UserRow | null> {
    const rows = await q.query<[UserRow[], number]>(`DELETE FROM users WHERE id = $1 RETURNING ${USER_COLUMNS}`, [id]);
    return rows[0][0] ?? null;
  }

  /**
   * Serializes changes that could remove an active admin (inside the caller's transaction), so two
   * concurrent demotions cannot both see "another admin remains".
   */
  async lockAdminChanges(q: Queryable): Promise<void> {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('users:active-admins'))");
  }

  async otherActiveAdminExists(id: number, q: Queryable): Promise<boolean> {
    const rows = await q.query<unknown[]>(
      "SELECT 1 FROM users WHERE id <> $1 AND is_active AND 'admin' = ANY(roles) LIMIT 1",
      [id],
    );
    return rows.length > 0;
  }

  /** Ids of `clientIds` that are not clients (client_list is an array, so no foreign key checks it). */
  async missingClientIds(clientIds: number[]): Promise<number[]> {
    if (clientIds.length === 0) return [];
    const rows = await this.db.query<{ id: number }[]>(
      'SELECT x.id FROM unnest($1::int[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.id = x.id) ORDER BY x.id',
      [clientIds],
    );
    return rows.map((r) => r.id);
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>('SELECT count(*)::int AS n FROM users');
    return rows[0].n;
  }
}

function isEmailConflict(error: unknown): boolean {
  const pg = error instanceof QueryFailedError ? (error.driverError as { code?: string; constraint?: string }) : undefined;
  return pg?.code === '23505' && pg.constraint === 'users_email_lower_key';
}
