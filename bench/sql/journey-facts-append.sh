#!/bin/bash
# Micro-benchmark of the journey-facts insert trigger (docs/performance.md, journey facts kept
# incrementally). Usage: bench/sql/journey-facts-append.sh DATABASE_URL [ENTRIES_PER_TRACKER] [RUNS]
# DATABASE_URL names a migrated database with no data: it gets 10 000 trackers with
# ENTRIES_PER_TRACKER entries each (default 5). Each cell appends one entry to each tracker inside
# a rolled-back transaction: "off" with the insert trigger disabled, "full" with the trigger that
# recomputes every touched tracker swapped in, "incr" with the installed one. It prints per entry
# the wall time and the backend's own CPU (/proc/self/stat, 10 ms ticks; needs a superuser).
set -euo pipefail
URL=$1; HISTORY=${2:-5}; RUNS=${3:-5}
psql -q -v ON_ERROR_STOP=1 "$URL" <<EOF
INSERT INTO clients (name) VALUES ('bench');
INSERT INTO brands (name, client_id) SELECT 'bench', id FROM clients;
INSERT INTO production_runs (brand_id, client_id) SELECT id, client_id FROM brands;
INSERT INTO storage_locations (name) VALUES ('Bench "store"');
INSERT INTO trackers (id, name, production_run_id, status, created_at, updated_at)
SELECT i, 'T' || i, (SELECT id FROM production_runs), 'CREATED', '2026-01-01', '2026-01-01' FROM generate_series(1, 10000) i;
INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, source)
SELECT i, CASE WHEN k = 1 THEN 'CREATED' WHEN k % 2 = 0 THEN 'IN_TRANSIT' ELSE 'IN_STORAGE' END,
       '2026-01-01'::timestamptz + k * interval '2 hours' + i * interval '1.001 s',
       CASE WHEN k % 2 = 1 AND k > 1 THEN (SELECT id FROM storage_locations) END, 'geofence'
  FROM generate_series(1, 10000) i, generate_series(1, $HISTORY) k ORDER BY k, i;
VACUUM ANALYZE;
EOF
cell() {
  local mode=$1 size=$2
  {
    echo "BEGIN;"
    case $mode in
      off) echo "ALTER TABLE tracker_status_history DISABLE TRIGGER tracker_journey_facts_insert;" ;;
      full) echo "CREATE OR REPLACE FUNCTION tracker_journey_facts_on_insert() RETURNS trigger LANGUAGE plpgsql AS \$\$
            BEGIN PERFORM tracker_journey_facts_refresh(ARRAY(SELECT DISTINCT tracker_id FROM new_entries ORDER BY 1)); RETURN NULL; END \$\$;" ;;
    esac
    cat <<EOF
DO \$\$ DECLARE t0 timestamptz; c0 bigint; c1 bigint; k int; n int := CASE WHEN $size = 1 THEN 1000 ELSE 10000 END; st text[]; BEGIN
  st := regexp_split_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '); c0 := st[12]::bigint + st[13]::bigint;
  t0 := clock_timestamp();
  FOR k IN 0..(n / $size - 1) LOOP
    INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, source)
    SELECT i, CASE WHEN i % 2 = 0 THEN 'IN_STORAGE' ELSE 'IN_TRANSIT' END, '2026-06-01'::timestamptz + i * interval '1.001 s',
           CASE WHEN i % 2 = 0 THEN (SELECT id FROM storage_locations) END, 'geofence'
      FROM generate_series(k * $size + 1, (k + 1) * $size) i;
  END LOOP;
  st := regexp_split_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '); c1 := st[12]::bigint + st[13]::bigint;
  RAISE NOTICE 'history=$HISTORY mode=$mode statement_entries=$size wall_us=% cpu_us=%',
    round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1e6 / n, 1), round((c1 - c0) * 10000.0 / n, 1);
END \$\$;
ROLLBACK;
EOF
  } | psql -q "$URL" 2>&1 | sed -n 's/.*NOTICE: *//p'
}
uptime
for _ in $(seq 1 "$RUNS"); do for size in 10000 1000 1; do for mode in off full incr; do cell $mode $size; done; done; done
uptime
