import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole domain in one coherent schema.
 * Timestamps are timestamptz (UTC on the wire). Deleting a row that others reference is
 * RESTRICTed so the API can answer 409; a tracker takes its history, reports and aggregates with it.
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id              serial PRIMARY KEY,
        name            text NOT NULL,
        email           text NOT NULL,
        password_hash   text NOT NULL,
        roles           text[] NOT NULL DEFAULT '{user}',
        client_list     integer[] NOT NULL DEFAULT '{}',
        notify_email    boolean NOT NULL DEFAULT true,
        notify_ui       boolean NOT NULL DEFAULT true,
        is_active       boolean NOT NULL DEFAULT true,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_roles_known CHECK (roles <@ ARRAY['admin','user','ingest']::text[])
      );
      CREATE UNIQUE INDEX users_email_lower_key ON users (lower(email));

      CREATE TABLE revoked_tokens (
        jti         uuid PRIMARY KEY,
        expires_at  timestamptz NOT NULL,
        revoked_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX revoked_tokens_expires_at_idx ON revoked_tokens (expires_at);

      CREATE TABLE clients (
        id          serial PRIMARY KEY,
        name        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX clients_name_lower_key ON clients (lower(name));

      CREATE TABLE brands (
        id          serial PRIMARY KEY,
        name        text NOT NULL,
        client_id   integer NOT NULL REFERENCES clients(id) ON DELETE RESTRICT,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX brands_client_name_key ON brands (client_id, lower(name));

      CREATE TABLE production_runs (
        id          serial PRIMARY KEY,
        description text NOT NULL DEFAULT '',
        brand_id    integer NOT NULL REFERENCES brands(id) ON DELETE RESTRICT,
        -- Denormalised from the brand (kept by triggers) so scoping is one indexed column.
        client_id   integer NOT NULL REFERENCES clients(id) ON DELETE RESTRICT,
        start_date  timestamptz,
        end_date    timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT production_runs_dates_ordered CHECK (end_date IS NULL OR start_date IS NULL OR end_date >= start_date)
      );
      CREATE INDEX production_runs_brand_idx ON production_runs (brand_id);
      CREATE INDEX production_runs_client_idx ON production_runs (client_id);

      CREATE FUNCTION production_runs_set_client() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT client_id INTO NEW.client_id FROM brands WHERE id = NEW.brand_id;
        RETURN NEW;
      END $$;
      CREATE TRIGGER production_runs_set_client BEFORE INSERT OR UPDATE OF brand_id ON production_runs
        FOR EACH ROW EXECUTE FUNCTION production_runs_set_client();

      CREATE FUNCTION brands_propagate_client() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE production_runs SET client_id = NEW.client_id WHERE brand_id = NEW.id;
        RETURN NEW;
      END $$;
      CREATE TRIGGER brands_propagate_client AFTER UPDATE OF client_id ON brands
        FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id) EXECUTE FUNCTION brands_propagate_client();

      CREATE TABLE storage_locations (
        id          serial PRIMARY KEY,
        name        text NOT NULL,
        address     text,
        latitude    double precision,
        longitude   double precision,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE delivery_locations (
        id          serial PRIMARY KEY,
        name        text NOT NULL,
        address     text,
        latitude    double precision,
        longitude   double precision,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE trackers (
        id                    serial PRIMARY KEY,
        name                  text NOT NULL,
        production_run_id     integer NOT NULL REFERENCES production_runs(id) ON DELETE RESTRICT,
        status                text NOT NULL DEFAULT 'CREATED',
        storage_location_id   integer REFERENCES storage_locations(id) ON DELETE RESTRICT,
        delivery_location_id  integer REFERENCES delivery_locations(id) ON DELETE RESTRICT,
        notes                 text,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT trackers_status_known CHECK (status IN ('CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED')),
        CONSTRAINT trackers_run_name_key UNIQUE (production_run_id, name)
      );
      CREATE INDEX trackers_status_idx ON trackers (status, id);
      CREATE INDEX trackers_storage_location_idx ON trackers (storage_location_id, id) WHERE storage_location_id IS NOT NULL;
      CREATE INDEX trackers_delivery_location_idx ON trackers (delivery_location_id, id) WHERE delivery_location_id IS NOT NULL;
      CREATE INDEX trackers_created_at_idx ON trackers (created_at, id);
      CREATE INDEX trackers_updated_at_idx ON trackers (updated_at, id);

      CREATE TABLE tracker_status_history (
        id                    bigserial PRIMARY KEY,
        tracker_id            integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        status                text NOT NULL,
        timestamp             timestamptz NOT NULL,
        storage_location_id   integer REFERENCES storage_locations(id) ON DELETE RESTRICT,
        delivery_location_id  integer REFERENCES delivery_locations(id) ON DELETE RESTRICT,
        notes                 text,
        created_by            integer REFERENCES users(id) ON DELETE SET NULL,
        created_at            timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT tracker_status_history_status_known CHECK (status IN ('CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED'))
      );
      -- "latest (timestamp, id) wins" and ascending history both read this index.
      CREATE INDEX tracker_status_history_tracker_ts_idx ON tracker_status_history (tracker_id, timestamp DESC, id DESC);
      CREATE INDEX tracker_status_history_storage_idx ON tracker_status_history (storage_location_id) WHERE storage_location_id IS NOT NULL;
      CREATE INDEX tracker_status_history_delivery_idx ON tracker_status_history (delivery_location_id) WHERE delivery_location_id IS NOT NULL;

      CREATE TABLE location_reports (
        id           bigserial PRIMARY KEY,
        tracker_id   integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        timestamp    timestamptz NOT NULL,
        latitude     double precision NOT NULL,
        longitude    double precision NOT NULL,
        confidence   integer NOT NULL,
        accuracy_m   double precision,
        source       varchar(64),
        -- Computed once at insert by the aggregation rules (confidence >= 2 and outside the box).
        eligible     boolean NOT NULL,
        received_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT location_reports_lat_range CHECK (latitude BETWEEN -90 AND 90),
        CONSTRAINT location_reports_lon_range CHECK (longitude BETWEEN -180 AND 180),
        CONSTRAINT location_reports_confidence_range CHECK (confidence >= 0)
      );
      -- Idempotent retries: the same (tracker, time, position) is one report.
      CREATE UNIQUE INDEX location_reports_dedup_key ON location_reports (tracker_id, timestamp, latitude, longitude);
      CREATE INDEX location_reports_received_at_idx ON location_reports (received_at);

      CREATE TABLE location_history_hourly (
        tracker_id   integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        bucket       timestamptz NOT NULL,
        report_id    bigint NOT NULL,
        reported_at  timestamptz NOT NULL,
        latitude     double precision NOT NULL,
        longitude    double precision NOT NULL,
        confidence   integer NOT NULL,
        PRIMARY KEY (tracker_id, bucket)
      );
      CREATE TABLE location_history_daily (
        tracker_id   integer NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
        bucket       timestamptz NOT NULL,
        report_id    bigint NOT NULL,
        reported_at  timestamptz NOT NULL,
        latitude     double precision NOT NULL,
        longitude    double precision NOT NULL,
        confidence   integer NOT NULL,
        PRIMARY KEY (tracker_id, bucket)
      );

      -- Start of today (UTC) minus HOURLY_HISTORY_DAYS; the app sets app.hourly_history_days per connection.
      CREATE FUNCTION location_history_cutoff() RETURNS timestamptz LANGUAGE sql STABLE AS $$
        SELECT date_trunc('day', now(), 'UTC')
               - make_interval(days => COALESCE(NULLIF(current_setting('app.hourly_history_days', true), ''), '7')::int)
      $$;

      CREATE VIEW location_history AS
        SELECT tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence, 'hourly'::text AS granularity
          FROM location_history_hourly WHERE bucket >= location_history_cutoff()
        UNION ALL
        SELECT tracker_id, bucket, report_id, reported_at, latitude, longitude, confidence, 'daily'::text AS granularity
          FROM location_history_daily WHERE bucket < location_history_cutoff();

      CREATE TABLE images (
        id                 serial PRIMARY KEY,
        original_filename  text NOT NULL,
        storage_filename   text NOT NULL UNIQUE,
        mime_type          text NOT NULL,
        size               integer NOT NULL,
        width              integer NOT NULL,
        height             integer NOT NULL,
        uploaded_by        integer REFERENCES users(id) ON DELETE SET NULL,
        uploaded_at        timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX images_uploaded_at_idx ON images (uploaded_at DESC, id DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE images;
      DROP VIEW location_history;
      DROP FUNCTION location_history_cutoff();
      DROP TABLE location_history_daily;
      DROP TABLE location_history_hourly;
      DROP TABLE location_reports;
      DROP TABLE tracker_status_history;
      DROP TABLE trackers;
      DROP TABLE delivery_locations;
      DROP TABLE storage_locations;
      DROP TRIGGER brands_propagate_client ON brands;
      DROP FUNCTION brands_propagate_client();
      DROP TABLE production_runs;
      DROP FUNCTION production_runs_set_client();
      DROP TABLE brands;
      DROP TABLE clients;
      DROP TABLE revoked_tokens;
      DROP TABLE users;
    `);
  }
}
