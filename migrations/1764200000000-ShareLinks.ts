import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Share links: a tracker's public view for people without an account. Only the SHA-256 of the
 * link's token is stored (the token is shown once, at creation). A link goes with its tracker;
 * its creator's deletion leaves it (created_by becomes null). Revocation sets `revoked_at` (the row
 * stays, so listings show it). A trigger sends `share-link:<hex of the token hash>` on the cache
 * invalidation channel when a link is created, revoked, changed or deleted, so every instance drops
 * its cached copy (see src/share-links/share-link-cache.db-rules.ts).
 */
export class ShareLinks1764200000000 implements MigrationInterface {
  name = 'ShareLinks1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE share_links (
        id                  serial PRIMARY KEY,
        tracker_id          integer NOT NULL REFERENCES trackers (id) ON DELETE CASCADE,
        token_hash          bytea NOT NULL,
        location_precision  text NOT NULL,
        expires_at          timestamptz NOT NULL,
        created_by          integer REFERENCES users (id) ON DELETE SET NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        revoked_at          timestamptz,
        CONSTRAINT share_links_token_hash_key UNIQUE (token_hash),
        CONSTRAINT share_links_token_hash_sha256 CHECK (octet_length(token_hash) = 32),
        CONSTRAINT share_links_location_precision_known CHECK (location_precision IN ('exact', 'approximate', 'none'))
      );
      CREATE INDEX share_links_tracker_idx ON share_links (tracker_id, id);

      CREATE FUNCTION notify_share_link_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('tps_cache_invalidation', 'share-link:' || encode(NEW.token_hash, 'hex'));
        ELSE
          PERFORM pg_notify('tps_cache_invalidation', 'share-link:' || encode(OLD.token_hash, 'hex'));
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER share_links_notify_changed
        AFTER INSERT OR DELETE OR UPDATE OF tracker_id, token_hash, location_precision, expires_at, revoked_at
        ON share_links FOR EACH ROW EXECUTE FUNCTION notify_share_link_changed();
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP TABLE share_links;
      DROP FUNCTION notify_share_link_changed();
    `);
  }
}
