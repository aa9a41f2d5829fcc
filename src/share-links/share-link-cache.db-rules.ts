import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * A created, revoked, changed or deleted share link (a deleted tracker takes its links along) sends
 * `share-link:<hex of the token hash>` on the cache invalidation channel at commit, so every
 * instance drops the copy its public routes answer from.
 */
export const SHARE_LINK_CACHE_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notify_share_link_changed',
      sql: `
      CREATE OR REPLACE FUNCTION notify_share_link_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('tps_cache_invalidation', 'share-link:' || encode(NEW.token_hash, 'hex'));
        ELSE
          PERFORM pg_notify('tps_cache_invalidation', 'share-link:' || encode(OLD.token_hash, 'hex'));
        END IF;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'share_links_notify_changed',
      table: 'share_links',
      sql: `
      CREATE TRIGGER share_links_notify_changed
        AFTER INSERT OR DELETE OR UPDATE OF tracker_id, token_hash, location_precision, expires_at, revoked_at
        ON share_links FOR EACH ROW EXECUTE FUNCTION notify_share_link_changed()`,
    },
  ],
};
