import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `location_reports` becomes a table range-partitioned by the report `timestamp`, one partition per
 * UTC day (`location_reports_pYYYYMMDD`), plus `location_reports_default` for every report outside
 * the days that have a partition (far past, far future): an insert never fails for want of a
 * partition. Why daily and by timestamp: docs/decisions.md (time partitions).
 *
 * - Keys: the dedup key (tracker_id, timestamp, latitude, longitude) already contains the partition
 *   key, so it stays one unique index and ingest's `ON CONFLICT` target is unchanged. The primary
 *   key becomes (id, timestamp) — a unique key must contain the partition key; ids still come from
 *   the same sequence, so they stay unique and keep growing across the conversion.
 * - `location_reports_add_partition(day)` creates one day's partition, used here and by the periodic
 *   job (src/maintenance). PostgreSQL refuses to attach a range while the default partition holds
 *   rows of it, so those rows are moved into the new table first, in the same transaction, under
 *   an ACCESS EXCLUSIVE lock on location_reports: with the weaker lock ATTACH needs, an insert
 *   that routed a row to the default partition before the attach committed fails afterwards
 *   ("violates partition constraint") when the row belongs to the new day. The new table gets a
 *   CHECK of its bounds before the attach, which then skips its validation scan.
 * - Conversion: the old table is renamed, the partitioned one created with partitions for every
 *   UTC day from the oldest report (at most LOOKBACK_DAYS back; older ones go to the default
 *   partition) to AHEAD_DAYS after today, and the rows are moved in id ranges of `batchRows`, one
 *   statement each, so no statement nears the service's statement timeout whatever the table size.
 *   The migration is one transaction: ingest waits until it has finished (docs/operations.md gives
 *   the measured rate, to plan the upgrade of a large table).
 */
export class PartitionLocationReports1763820000000 implements MigrationInterface {
  name = 'PartitionLocationReports1763820000000';

  /** Rows per moving statement (tests lower it to move a small table in several batches). */
  static batchRows = 50_000;
  /** Days after today that get a partition at once (the periodic job keeps the same margin). */
  static readonly AHEAD_DAYS = 7;
  /** Oldest day the conversion gives a partition of its own, in days before today. */
  static readonly LOOKBACK_DAYS = 400;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE location_reports RENAME TO location_reports_unpartitioned;
      ALTER TABLE location_reports_unpartitioned RENAME CONSTRAINT location_reports_pkey TO location_reports_unpartitioned_pkey;
      ALTER INDEX location_reports_dedup_key RENAME TO location_reports_unpartitioned_dedup_key;
      ALTER INDEX location_reports_received_at_idx RENAME TO location_reports_unpartitioned_received_at_idx;

      CREATE TABLE location_reports (
        id           bigint NOT NULL DEFAULT nextval('location_reports_id_seq'),
        tracker_id   integer NOT NULL,
        timestamp    timestamptz NOT NULL,
        latitude     double precision NOT NULL,
        longitude    double precision NOT NULL,
        confidence   integer NOT NULL,
        accuracy_m   double precision,
        source       varchar(64),
        eligible     boolean NOT NULL,
        received_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT location_reports_lat_range CHECK (latitude BETWEEN -90 AND 90),
        CONSTRAINT location_reports_lon_range CHECK (longitude BETWEEN -180 AND 180),
        CONSTRAINT location_reports_confidence_range CHECK (confidence >= 0),
        CONSTRAINT location_reports_pkey PRIMARY KEY (id, timestamp)
      ) PARTITION BY RANGE (timestamp);
      ALTER SEQUENCE location_reports_id_seq OWNED BY location_reports.id;
      -- Idempotent retries: the same (tracker, time, position) is one report.
      CREATE UNIQUE INDEX location_reports_dedup_key ON location_reports (tracker_id, timestamp, latitude, longitude);
      CREATE INDEX location_reports_received_at_idx ON location_reports (received_at);
      CREATE TABLE location_reports_default PARTITION OF location_reports DEFAULT;

      CREATE FUNCTION location_reports_add_partition(day date) RETURNS boolean LANGUAGE plpgsql AS $$
      DECLARE
        part text := 'location_reports_p' || to_char(day, 'YYYYMMDD');
        lo timestamptz := day::timestamp AT TIME ZONE 'UTC';
        hi timestamptz := (day + 1)::timestamp AT TIME ZONE 'UTC';
      BEGIN
        IF to_regclass(part) IS NOT NULL THEN
          RETURN false;
        END IF;
        -- No statement on location_reports may run across the change of partitions: one that
        -- routed a row of this day to the default partition would fail its partition check.
        LOCK TABLE location_reports IN ACCESS EXCLUSIVE MODE;
        LOCK TABLE location_reports_default IN ACCESS EXCLUSIVE MODE;
        EXECUTE format('CREATE TABLE %I (LIKE location_reports INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
        -- Proves the bound to ATTACH, which then skips scanning the new table.
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (timestamp >= %L AND timestamp < %L)', part, part || '_bound', lo, hi);
        EXECUTE format('WITH moved AS (DELETE FROM location_reports_default WHERE timestamp >= %L AND timestamp < %L RETURNING *)
                        INSERT INTO %I SELECT * FROM moved', lo, hi, part);
        EXECUTE format('ALTER TABLE location_reports ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_bound');
        RETURN true;
      END $$;
    `);
    await q.query(
      `WITH t AS (SELECT (now() AT TIME ZONE 'UTC')::date AS today),
            oldest AS (SELECT (min(timestamp) AT TIME ZONE 'UTC')::date AS day FROM location_reports_unpartitioned, t
                        WHERE timestamp >= (t.today - $1::int)::timestamp AT TIME ZONE 'UTC')
       SELECT location_reports_add_partition(d::date)
         FROM t, oldest, generate_series(least(oldest.day, t.today - 1)::timestamp, (t.today + $2::int)::timestamp, interval '1 day') d`,
      [PartitionLocationReports1763820000000.LOOKBACK_DAYS, PartitionLocationReports1763820000000.AHEAD_DAYS],
    );
    await moveInBatches(q, 'location_reports_unpartitioned', 'location_reports', PartitionLocationReports1763820000000.batchRows);
    await q.query(`DROP TABLE location_reports_unpartitioned`);
    await q.query(`ANALYZE location_reports`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE location_reports RENAME TO location_reports_partitioned;
      ALTER TABLE location_reports_partitioned RENAME CONSTRAINT location_reports_pkey TO location_reports_partitioned_pkey;
      ALTER INDEX location_reports_dedup_key RENAME TO location_reports_partitioned_dedup_key;
      ALTER INDEX location_reports_received_at_idx RENAME TO location_reports_partitioned_received_at_idx;
      CREATE TABLE location_reports (
        id           bigint NOT NULL DEFAULT nextval('location_reports_id_seq') PRIMARY KEY,
        tracker_id   integer NOT NULL,
        timestamp    timestamptz NOT NULL,
        latitude     double precision NOT NULL,
        longitude    double precision NOT NULL,
        confidence   integer NOT NULL,
        accuracy_m   double precision,
        source       varchar(64),
        eligible     boolean NOT NULL,
        received_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT location_reports_lat_range CHECK (latitude BETWEEN -90 AND 90),
        CONSTRAINT location_reports_lon_range CHECK (longitude BETWEEN -180 AND 180),
        CONSTRAINT location_reports_confidence_range CHECK (confidence >= 0)
      );
      ALTER SEQUENCE location_reports_id_seq OWNED BY location_reports.id;
      CREATE UNIQUE INDEX location_reports_dedup_key ON location_reports (tracker_id, timestamp, latitude, longitude);
      CREATE INDEX location_reports_received_at_idx ON location_reports (received_at);
      DROP FUNCTION location_reports_add_partition(date);
    `);
    await moveInBatches(q, 'location_reports_partitioned', 'location_reports', PartitionLocationReports1763820000000.batchRows);
    await q.query(`DROP TABLE location_reports_partitioned`);
  }
}

/**
 * Copies every row of `from` into `to` (same columns) in keyset batches: each statement takes the
 * next `batch` ids (read from the id index), whatever gaps the sequence left.
 */
async function moveInBatches(q: QueryRunner, from: string, to: string, batch: number): Promise<void> {
  let after = '-1';
  for (;;) {
    const [next] = (await q.query(`SELECT max(id)::text AS last FROM (SELECT id FROM ${from} WHERE id > $1::bigint ORDER BY id LIMIT $2) b`, [
      after,
      batch,
    ])) as { last: string | null }[];
    if (next.last === null) return;
    await q.query(
      `INSERT INTO ${to} (id, tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, eligible, received_at)
       SELECT id, tracker_id, timestamp, latitude, longitude, confidence, accuracy_m, source, eligible, received_at
         FROM ${from} WHERE id > $1::bigint AND id <= $2::bigint`,
      [after, next.last],
    );
    after = next.last;
  }
}
