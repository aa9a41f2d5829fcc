import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * One UTC day's partition of location_reports, created by the periodic maintenance job. Rows of that day waiting in
 * the default partition move into the new table first, under an ACCESS EXCLUSIVE lock: with the weaker lock ATTACH
 * needs, an insert routed to the default partition before the attach would fail its partition check afterwards.
 * Returns false when the partition already exists.
 */
export const LOCATION_PARTITION_RULES: DatabaseRules = {
  functions: [
    {
      name: 'location_reports_add_partition',
      sql: `
      CREATE OR REPLACE FUNCTION location_reports_add_partition(day date) RETURNS boolean LANGUAGE plpgsql AS $$
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
      END $$`,
    },
  ],
  triggers: [],
};
