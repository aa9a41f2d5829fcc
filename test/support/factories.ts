import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { TokenService } from '../../src/auth/token.service.js';
import type { Role } from '../../src/users/entities/user.entity.js';

let seq = 0;
const unique = (prefix: string) => `${prefix}-${++seq}-${randomUUID().slice(0, 6)}`;

export interface CreatedUser {
  id: number;
  email: string;
  password: string;
  token: string;
  auth: { Authorization: string };
}

/**
 * Test data builders. Rows go in through SQL that mirrors the repositories' own inserts; feature
 * modules may switch a builder to their repository once it exists.
 */
export class Factories {
  constructor(
    private readonly db: DataSource,
    private readonly tokens: TokenService,
  ) {}

  // A fixed argon2id hash of "password123" keeps user creation cheap.
  static readonly PASSWORD = 'password123';
  static readonly PASSWORD_HASH =
    '$argon2id$v=19$m=19456,t=2,p=1$dGVzdHNhbHR0ZXN0c2FsdA$JUARRYmTDnb5MxEDrThqtHuvEwZy7dcfNb1Zy6+BoM8';

  async user(options: { roles?: Role[]; clients?: number[]; email?: string; name?: string; isActive?: boolean } = {}): Promise<CreatedUser> {
    const email = options.email ?? `${unique('user')}@example.com`;
    const [row] = await this.db.query<{ id: number }[]>(
      `INSERT INTO users (name, email, password_hash, roles, client_list, is_active) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [options.name ?? 'Test User', email, Factories.PASSWORD_HASH, options.roles ?? ['user'], options.clients ?? [], options.isActive ?? true],
    );
    const token = this.tokens.issue(row.id, 'access').token;
    return { id: row.id, email, password: Factories.PASSWORD, token, auth: { Authorization: `Bearer ${token}` } };
  }

  admin(): Promise<CreatedUser> {
    return this.user({ roles: ['admin'] });
  }

  ingest(): Promise<CreatedUser> {
    return this.user({ roles: ['ingest'] });
  }

  async client(name = unique('client')): Promise<{ id: number; name: string }> {
    const [row] = await this.db.query(`INSERT INTO clients (name) VALUES ($1) RETURNING id, name`, [name]);
    return row;
  }

  async brand(clientId?: number, name = unique('brand')): Promise<{ id: number; name: string; client_id: number }> {
    const client = clientId ?? (await this.client()).id;
    const [row] = await this.db.query(`INSERT INTO brands (name, client_id) VALUES ($1, $2) RETURNING id, name, client_id`, [name, client]);
    return row;
  }

  async run(
    options: { brandId?: number; clientId?: number; description?: string; startDate?: string | null; endDate?: string | null } = {},
  ): Promise<{ id: number; brand_id: number; client_id: number; description: string }> {
    const brandId = options.brandId ?? (await this.brand(options.clientId)).id;
    const [row] = await this.db.query(
      `INSERT INTO production_runs (description, brand_id, start_date, end_date) VALUES ($1, $2, $3, $4)
       RETURNING id, brand_id, client_id, description`,
      [options.description ?? unique('run'), brandId, options.startDate ?? '2026-01-01T00:00:00Z', options.endDate ?? null],
    );
    return row;
  }

  async storageLocation(name = unique('storage')): Promise<{ id: number; name: string }> {
    const [row] = await this.db.query(`INSERT INTO storage_locations (name) VALUES ($1) RETURNING id, name`, [name]);
    return row;
  }

  async deliveryLocation(name = unique('delivery')): Promise<{ id: number; name: string }> {
    const [row] = await this.db.query(`INSERT INTO delivery_locations (name) VALUES ($1) RETURNING id, name`, [name]);
    return row;
  }

  /**
   * A tracker with a status history. `history` defaults to one CREATED entry at created_at; the
   * tracker's status/storage follow the latest entry, as the service keeps them.
   */
  async tracker(
    options: {
      runId?: number;
      name?: string;
      deliveryLocationId?: number | null;
      createdAt?: string;
      history?: { status: string; timestamp: string; storageLocationId?: number; deliveryLocationId?: number }[];
    } = {},
  ): Promise<{ id: number; name: string; production_run_id: number }> {
    const runId = options.runId ?? (await this.run()).id;
    const createdAt = options.createdAt ?? new Date().toISOString();
    const history = options.history ?? [{ status: 'CREATED', timestamp: createdAt }];
    const last = [...history].sort((a, b) => a.timestamp.localeCompare(b.timestamp)).at(-1);
    const [row] = await this.db.query(
      `INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id, name, production_run_id`,
      [
        options.name ?? unique('TRK'),
        runId,
        last?.status ?? 'CREATED',
        last?.status === 'IN_STORAGE' ? (last.storageLocationId ?? null) : null,
        options.deliveryLocationId ?? null,
        createdAt,
      ],
    );
    for (const entry of history) {
      await this.db.query(
        `INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [row.id, entry.status, entry.timestamp, entry.storageLocationId ?? null, entry.deliveryLocationId ?? null],
      );
    }
    return row;
  }
}
