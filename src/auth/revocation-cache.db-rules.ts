import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * A revoked token sends `revoked:<jti>` on the cache invalidation channel at commit, so every instance drops its
 * cached revocation state of that token.
 */
export const REVOCATION_CACHE_RULES: DatabaseRules = {
  functions: [
    {
      name: 'notify_token_revoked',
      sql: `
      CREATE OR REPLACE FUNCTION notify_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tps_cache_invalidation', 'revoked:' || NEW.jti);
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'revoked_tokens_notify',
      table: 'revoked_tokens',
      sql: `
      CREATE TRIGGER revoked_tokens_notify AFTER INSERT ON revoked_tokens
        FOR EACH ROW EXECUTE FUNCTION notify_token_revoked()`,
    },
  ],
};
