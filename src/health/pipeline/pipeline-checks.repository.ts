import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../../common/auth/access-scope.js';
import { readOnlyStep } from '../../infrastructure/health/pipeline-step.js';
import { Db, sql } from '../../infrastructure/database/db.js';

/**
 * SQL of the pipeline health steps that belong to no feature: the connection and the required
 * tables (catalog lookups only). The other steps' SQL lives in the feature owning the tables
 * (PipelineStepProvider in src/infrastructure/health/pipeline-step.ts).
 */

/** Tables the service cannot work without (the location_history view is checked separately). */
const REQUIRED_TABLES = [
  'users',
  'revoked_tokens',
  'clients',
  'brands',
  'production_runs',
  'storage_locations',
  'delivery_locations',
  'trackers',
  'tracker_status_history',
  'location_reports',
  'location_history_hourly',
  'location_history_daily',
  'images',
] as const;

@Injectable()
export class PipelineChecksRepository {
  constructor(private readonly db: Db) {}

  async ping(scope: AccessScope): Promise<{ server_version: string }> {
    return readOnlyStep(this.db, scope, async () => {
      const row = await this.db.one<{ server_version: string }>(
        sql`SELECT 1 AS ok, current_setting('server_version') AS server_version`,
      );
      return { server_version: row.server_version };
    });
  }

  /** Presence of each required table in the current schema (catalog lookups only). */
  async tablesPresent(scope: AccessScope): Promise<Record<string, boolean>> {
    return readOnlyStep(this.db, scope, async () => {
      const rows = await this.db.rows<{ name: string; present: boolean }>(
        sql`SELECT name, EXISTS (
                  SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = name AND c.relkind IN ('r', 'p')
                ) AS present
           FROM unnest(${REQUIRED_TABLES}::text[]) AS name`,
      );
      return Object.fromEntries(rows.map((r) => [r.name, r.present]));
    });
  }
}
