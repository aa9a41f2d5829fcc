import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A production run may set its own silence threshold for the `silent` alert (hours, 1..720; null: the default). */
export class RunAlertSilentHours1764040000000 implements MigrationInterface {
  name = 'RunAlertSilentHours1764040000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE production_runs ADD COLUMN alert_silent_hours integer
        CONSTRAINT production_runs_alert_silent_hours_range CHECK (alert_silent_hours BETWEEN 1 AND 720)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE production_runs DROP COLUMN alert_silent_hours`);
  }
}
