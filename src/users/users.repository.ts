import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Role } from './entities/user.entity.js';

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

export const USER_COLUMNS = 'id, name, email, roles, client_list, notify_email, notify_ui, is_active, created_at, updated_at';

/** SQL for users. Users are global (not client-scoped); admin-only routes guard them. */
@Injectable()
export class UsersRepository {
  constructor(private readonly db: DataSource) {}

  async findById(id: number): Promise<UserRow | null> {
    const rows = await this.db.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async findActiveById(id: number): Promise<UserRow | null> {
    const rows = await this.db.query<UserRow[]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND is_active`, [id]);
    return rows[0] ?? null;
  }

  async findByEmailWithHash(email: string): Promise<(UserRow & { password_hash: string }) | null> {
    const rows = await this.db.query<(UserRow & { password_hash: string })[]>(
      `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`,
      [email],
    );
    return rows[0] ?? null;
  }

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
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${USER_COLUMNS}`,
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
    return rows[0];
  }

  async count(): Promise<number> {
    const rows = await this.db.query<{ n: number }[]>('SELECT count(*)::int AS n FROM users');
    return rows[0].n;
  }
}
