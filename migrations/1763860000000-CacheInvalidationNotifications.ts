import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every instance keeps the authenticated user row, token revocations and latest locations in an
 * in-process cache tier, invalidated by messages on the `tps_cache_invalidation` channel. These
 * triggers send them from the database itself, so every change invalidates on every instance —
 * whoever made it (an instance, the CLI, a migration, an operator in psql) — and only when its
 * transaction commits. Payloads are the in-process tier's keys:
 * - `user:<id>`: a users row was updated or deleted (role, client_list, is_active, token epoch);
 * - `revoked:<jti>`: a token was revoked;
 * - `gen:latest-locations`: a latest location may have changed (any write to the aggregates).
 *   Per statement, and NOTIFY folds equal messages of one transaction into one: an ingest batch
 *   sends one message, not one per row.
 */
export class CacheInvalidationNotifications1763860000000 implements MigrationInterface {
  name = 'CacheInvalidationNotifications1763860000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION notify_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'user:' || OLD.id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER users_notify_changed AFTER UPDATE OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION notify_user_changed();

      CREATE FUNCTION notify_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'revoked:' || NEW.jti);
        RETURN NULL;
      END $$;
      CREATE TRIGGER revoked_tokens_notify AFTER INSERT ON revoked_tokens
        FOR EACH ROW EXECUTE FUNCTION notify_token_revoked();

      CREATE FUNCTION notify_locations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'gen:latest-locations');
        RETURN NULL;
      END $$;
      CREATE TRIGGER location_history_hourly_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON location_history_hourly
        FOR EACH STATEMENT EXECUTE FUNCTION notify_locations_changed();
      CREATE TRIGGER location_history_daily_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON location_history_daily
        FOR EACH STATEMENT EXECUTE FUNCTION notify_locations_changed();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TRIGGER location_history_daily_notify ON location_history_daily;
      DROP TRIGGER location_history_hourly_notify ON location_history_hourly;
      DROP FUNCTION notify_locations_changed();
      DROP TRIGGER revoked_tokens_notify ON revoked_tokens;
      DROP FUNCTION notify_token_revoked();
      DROP TRIGGER users_notify_changed ON users;
      DROP FUNCTION notify_user_changed();
    `);
  }
}
