import { Injectable } from '@nestjs/common';
import type { Role } from '../common/auth/roles.js';
import { Db, join, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';
import { PreparedQueries } from '../infrastructure/database/prepared-queries.js';
import { isUniqueViolation } from '../infrastructure/database/sql-state.js';
import { preciseNowMicros } from '../common/time/precise-clock.js';

/** A user as the API may see it: no password hash, no token epoch. */
export type UserRow = Omit<Tables['users'], 'password_hash' | 'tokens_valid_after' | 'roles'> & { roles: Role[] };

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

/** Another user already has this e-mail (compared case-insensitively by a unique index). */
export class EmailTakenError extends Error {
  constructor() {
    super('A user with this email already exists');
  }
}

const COLUMNS = raw('id, name, email, roles, client_list, notify_email, notify_ui, is_active, created_at, updated_at');

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
    private readonly db: Db,
    private readonly prepared: PreparedQueries,
  ) {}

  findById(id: number): Promise<UserRow | null> {
    return this.db.first<UserRow>(sql`SELECT ${COLUMNS} FROM users WHERE id = ${id}`);
  }

  /** Read on every authenticated request, hence a prepared statement. */
  async findActiveById(id: number): Promise<ActiveUserRow | null> {
    const rows = await this.prepared.rows<UserRow & { tokens_valid_after_us: string | null }>(
      sql`SELECT ${COLUMNS}, (extract(epoch FROM tokens_valid_after) * 1000000)::bigint AS tokens_valid_after_us
         FROM users WHERE id = ${id} AND is_active`,
    );
    const row = rows[0];
    if (!row) return null;
    return {
      ...row,
      tokens_valid_after_us: row.tokens_valid_after_us === null ? null : Number(row.tokens_valid_after_us),
    };
  }

  findByEmailWithHash(email: string): Promise<(UserRow & { password_hash: string }) | null> {
    return this.db.first<UserRow & { password_hash: string }>(
      sql`SELECT ${COLUMNS}, password_hash FROM users WHERE lower(email) = lower(${email})`,
    );
  }

  async findPasswordHash(id: number): Promise<string | null> {
    const row = await this.db.first<{ password_hash: string }>(sql`SELECT password_hash FROM users WHERE id = ${id}`);
    return row?.password_hash ?? null;
  }

  list(page: { skip: number; limit: number }): Promise<PagedRows<UserRow>> {
    return this.db.replica.page<UserRow>({ columns: COLUMNS, from: sql`users`, where: [], orderBy: sql`id` }, page);
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
    const row = await this.db.first<UserRow>(
      sql`INSERT INTO users (name, email, password_hash, roles, client_list, notify_email, notify_ui, is_active)
       VALUES (${user.name}, ${user.email}, ${user.passwordHash}, ${user.roles}, ${user.clientList},
         ${user.notifyEmail ?? true}, ${user.notifyUi ?? true}, ${user.isActive ?? true})
       ON CONFLICT ((lower(email))) DO NOTHING
       RETURNING ${COLUMNS}`,
    );
    if (row === null) throw new EmailTakenError();
    return row;
  }

  /**
   * Applies the given fields; null when the user does not exist; EmailTakenError on a duplicate
   * e-mail. A new password or a deactivation also moves the token epoch to now: every token
   * issued to the user before is refused from then on (the one that made the change included).
   */
  async update(id: number, patch: UserPatch): Promise<UserRow | null> {
    const sets: Sql[] = (Object.keys(PATCH_COLUMNS) as (keyof UserPatch)[])
      .filter((field) => patch[field] !== undefined)
      .map((field) => sql`${raw(PATCH_COLUMNS[field])} = ${patch[field]}`);
    if (patch.passwordHash !== undefined || patch.isActive === false) {
      sets.push(
        sql`tokens_valid_after = 'epoch'::timestamptz + ${String(preciseNowMicros())}::bigint * interval '1 microsecond'`,
      );
    }
    sets.push(sql`updated_at = now()`);
    try {
      return await this.db.first<UserRow>(
        sql`UPDATE users SET ${join(sets, ', ')} WHERE id = ${id} RETURNING ${COLUMNS}`,
      );
    } catch (error) {
      if (isUniqueViolation(error, 'users_email_lower_key')) throw new EmailTakenError();
      throw error;
    }
  }

  delete(id: number): Promise<UserRow | null> {
    return this.db.first<UserRow>(sql`DELETE FROM users WHERE id = ${id} RETURNING ${COLUMNS}`);
  }

  /**
   * Serializes changes that could remove an active admin (call inside the caller's transaction:
   * the lock is held until it ends), so two concurrent demotions cannot both see "another admin
   * remains".
   */
  async lockAdminChanges(): Promise<void> {
    await this.db.rows(sql`SELECT pg_advisory_xact_lock(hashtext('users:active-admins'))`);
  }

  async otherActiveAdminExists(id: number): Promise<boolean> {
    const rows = await this.db.rows(
      sql`SELECT 1 FROM users WHERE id <> ${id} AND is_active AND 'admin' = ANY(roles) LIMIT 1`,
    );
    return rows.length > 0;
  }

  /** Ids of `clientIds` that are not clients (client_list is an array, so no foreign key checks it). */
  async missingClientIds(clientIds: number[]): Promise<number[]> {
    if (clientIds.length === 0) return [];
    const rows = await this.db.rows<{ id: number }>(
      sql`SELECT x.id FROM unnest(${clientIds}::int[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.id = x.id) ORDER BY x.id`,
    );
    return rows.map((r) => r.id);
  }

  async count(): Promise<number> {
    return (await this.db.one<{ n: number }>(sql`SELECT count(*)::int AS n FROM users`)).n;
  }
}
