import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * An updated or deleted users row sends `user:<id>` on the cache invalidation channel at commit, so every instance
 * drops the row its guard authenticates with, whoever changed it.
 */
export const USER_CACHE_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notify_user_changed',
      sql: `
      CREATE OR REPLACE FUNCTION notify_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'user:' || OLD.id);
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'users_notify_changed',
      table: 'users',
      sql: `
      CREATE TRIGGER users_notify_changed AFTER UPDATE OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION notify_user_changed()`,
    },
  ],
};
