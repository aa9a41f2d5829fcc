/**
 * PostgreSQL advisory lock key that orders location writes against tracker deletes and rebuilds
 * (location rows carry no per-row foreign keys, migration 1763720000000):
 * - an ingest batch holds it shared for its transaction, taken in a statement of its own before the
 *   batch statement, so that statement's snapshot already shows every tracker delete that
 *   committed before the lock was granted;
 * - the tracker-delete trigger takes it exclusively before it deletes the location rows, so
 *   batches in flight finish first and their rows go too, and later batches see the tracker gone;
 * - a rebuild takes it exclusively after locking its trackers, so no report slips between its
 *   delete and its re-insert.
 * The geofence worker also reads who holds it shared (pg_locks): an ingest batch in flight, whose
 * later-begun neighbours' marks it leaves for a moment (GeofencePendingRepository.available).
 * A lock on every tracker of a batch (FOR KEY SHARE) would write a lock into each tracker row a
 * batch touches, a cost that grows with the batch. Migration 1763760000000 uses the same literal.
 */
export const LOCATION_WRITES_LOCK_KEY = 727_276;
