import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A geofence mark's `marked_at` is the moment the mark is written — at the end of the statement
 * that stores the entry; an ingest batch dates it again right before it commits
 * (LocationsRepository.insertBatch) — instead of the writing transaction's start. The processing
 * lag (the metric, the health check, the benchmark) counts from it, so it no longer includes the
 * writing batch's own statement time: results are due within 2 s of the ingest response, not of
 * the request's arrival. Rows already queued keep their time. The writing transaction's start
 * moves to `began_at`: a pass orders writers by it (GeofencePendingRepository.available).
 */
export class GeofenceMarkTime1763960000000 implements MigrationInterface {
  name = 'GeofenceMarkTime1763960000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE geofence_pending
        ADD COLUMN began_at timestamptz NOT NULL DEFAULT now(),
        ALTER COLUMN marked_at SET DEFAULT clock_timestamp()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE geofence_pending DROP COLUMN began_at, ALTER COLUMN marked_at SET DEFAULT now()`);
  }
}
