import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * Any write to the location aggregates sends `gen:latest-locations` on the cache invalidation channel, once per
 * statement (NOTIFY folds equal messages of a transaction into one) and only at commit, whoever wrote.
 */
export const LATEST_LOCATIONS_CACHE_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notify_locations_changed',
      sql: `
      CREATE OR REPLACE FUNCTION notify_locations_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'gen:latest-locations');
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'location_history_hourly_notify',
      table: 'location_history_hourly',
      sql: `
      CREATE TRIGGER location_history_hourly_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON location_history_hourly
        FOR EACH STATEMENT EXECUTE FUNCTION notify_locations_changed()`,
    },
    {
      name: 'location_history_daily_notify',
      table: 'location_history_daily',
      sql: `
      CREATE TRIGGER location_history_daily_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON location_history_daily
        FOR EACH STATEMENT EXECUTE FUNCTION notify_locations_changed()`,
    },
  ],
};
