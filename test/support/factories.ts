import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { TokenService } from '../../src/auth/token.service.js';
import { BrandsRepository } from '../../src/brands/brands.repository.js';
import { ClientsRepository } from '../../src/clients/clients.repository.js';
import { ProductionRunsRepository } from '../../src/production-runs/production-runs.repository.js';
import { DeliveryLocationsRepository, StorageLocationsRepository } from '../../src/places/places.repository.js';
import type { Role } from '../../src/common/auth/roles.js';
import { UsersRepository } from '../../src/users/users.repository.js';

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
 * Test data builders. Users and reference data go in through the application's own repositories;
 * trackers go in through SQL because tests need histories the API cannot write in one call
 * (back-dated entries without an initial CREATED one, or no entries at all).
 */
export class Factories {
  constructor(
    private readonly app: INestApplicationContext,
    private readonly db: DataSource,
    private readonly tokens: TokenService,
  ) {}

  // A fixed argon2id hash of "password123" keeps user creation cheap.
  static readonly PASSWORD = 'password123';
  static readonly PASSWORD_HASH =
    '$argon2id$v=19$m=19456,t=2,p=1$dGVzdHNhbHR0ZXN0c2FsdA$JUARRYmTDnb5MxEDrThqtHuvEwZy7dcfNb1Zy6+BoM8';

  async user(
    options: { roles?: Role[]; clients?: number[]; email?: string; name?: string; isActive?: boolean } = {},
  ): Promise<CreatedUser> {
    const email = options.email ?? `${unique('user')}@example.com`;
    const row = await this.app.get(UsersRepository).insert({
      name: options.name ?? 'Test User',
      email,
      passwordHash: Factories.PASSWORD_HASH,
      roles: options.roles ?? ['user'],
      clientList: options.clients ?? [],
      isActive: options.isActive ?? true,
    });
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
    const row = await this.app.get(ClientsRepository).insert({ name });
    return { id: row.id, name: row.name };
  }

  async brand(clientId?: number, name = unique('brand')): Promise<{ id: number; name: string; client_id: number }> {
    const client = clientId ?? (await this.client()).id;
    const row = await this.app.get(BrandsRepository).insert({ name, clientId: client });
    return { id: row.id, name: row.name, client_id: row.client_id };
  }

  async run(
    options: {
      brandId?: number;
      clientId?: number;
      description?: string;
      startDate?: string | null;
      endDate?: string | null;
    } = {},
  ): Promise<{ id: number; brand_id: number; client_id: number; description: string }> {
    const brandId = options.brandId ?? (await this.brand(options.clientId)).id;
    const date = (value: string | null | undefined, fallback: string | null) => {
      const chosen = value === undefined ? fallback : value;
      return chosen === null ? null : new Date(chosen);
    };
    const row = await this.app.get(ProductionRunsRepository).insert({
      description: options.description ?? unique('run'),
      brandId,
      startDate: date(options.startDate, '2026-01-01T00:00:00Z'),
      endDate: date(options.endDate, null),
    });
    return { id: row.id, brand_id: row.brand_id, client_id: row.client_id, description: row.description };
  }

  async storageLocation(name = unique('storage')): Promise<{ id: number; name: string }> {
    const row = await this.app.get(StorageLocationsRepository).insert({ name });
    return { id: row.id, name: row.name };
  }

  async deliveryLocation(name = unique('delivery')): Promise<{ id: number; name: string }> {
    const row = await this.app.get(DeliveryLocationsRepository).insert({ name });
    return { id: row.id, name: row.name };
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
