import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys of machine clients. A key belongs to a user (its owner; the owner's deletion deletes
 * it) and is found by its public `prefix`; only the SHA-256 of its secret is stored. `scopes` and
 * the optional `client_ids` narrow what the owner may do; revocation sets `revoked_at` (the row
 * stays, so listings show it). A trigger sends `api-key:<prefix>` on the cache invalidation channel
 * when a key is created, revoked, changed or deleted, so every instance drops its cached copy
 * (see src/api-keys/api-key-cache.db-rules.ts); `last_used_at` alone changes nothing there.
 */
export class ApiKeys1764000000000 implements MigrationInterface {
  name = 'ApiKeys1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id            serial PRIMARY KEY,
        user_id       integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name          text NOT NULL,
        prefix        text NOT NULL,
        secret_hash   bytea NOT NULL,
        scopes        text[] NOT NULL,
        client_ids    integer[],
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz,
        last_used_at  timestamptz,
        revoked_at    timestamptz,
        CONSTRAINT api_keys_prefix_key UNIQUE (prefix),
        CONSTRAINT api_keys_prefix_format CHECK (prefix ~ '^[a-z0-9]{8}$'),
        CONSTRAINT api_keys_secret_hash_sha256 CHECK (octet_length(secret_hash) = 32),
        CONSTRAINT api_keys_name_length CHECK (char_length(name) BETWEEN 1 AND 100),
        CONSTRAINT api_keys_scopes_known CHECK (
          cardinality(scopes) > 0 AND scopes <@ ARRAY['read','write','ingest','webhooks']::text[]),
        CONSTRAINT api_keys_client_ids_not_empty CHECK (client_ids IS NULL OR cardinality(client_ids) > 0)
      );
      CREATE INDEX api_keys_user_idx ON api_keys (user_id, id);

      CREATE FUNCTION notify_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('tps_cache_invalidation', 'api-key:' || NEW.prefix);
        ELSE
          PERFORM pg_notify('tps_cache_invalidation', 'api-key:' || OLD.prefix);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER api_keys_notify_changed
        AFTER INSERT OR DELETE OR UPDATE OF user_id, prefix, secret_hash, scopes, client_ids, expires_at, revoked_at
        ON api_keys FOR EACH ROW EXECUTE FUNCTION notify_api_key_changed();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TABLE api_keys;
      DROP FUNCTION notify_api_key_changed();
    `);
  }
}
