import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * A created, revoked, changed or deleted API key (a deleted owner takes their keys along) sends
 * `api-key:<prefix>` on the cache invalidation channel at commit, so every instance drops the copy
 * its guard authenticates the key with. Recording a key's last use (only `last_used_at`) sends nothing.
 */
export const API_KEY_CACHE_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notify_api_key_changed',
      sql: `
      CREATE OR REPLACE FUNCTION notify_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('tps_cache_invalidation', 'api-key:' || NEW.prefix);
        ELSE
          PERFORM pg_notify('tps_cache_invalidation', 'api-key:' || OLD.prefix);
        END IF;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'api_keys_notify_changed',
      table: 'api_keys',
      sql: `
      CREATE TRIGGER api_keys_notify_changed
        AFTER INSERT OR DELETE OR UPDATE OF user_id, prefix, secret_hash, scopes, client_ids, expires_at, revoked_at
        ON api_keys FOR EACH ROW EXECUTE FUNCTION notify_api_key_changed()`,
    },
  ],
};
