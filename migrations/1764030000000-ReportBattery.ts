import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Location reports may carry the device's battery level in percent (0..100), stored as reported. */
export class ReportBattery1764030000000 implements MigrationInterface {
  name = 'ReportBattery1764030000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE location_reports ADD COLUMN battery smallint
        CONSTRAINT location_reports_battery_percent CHECK (battery BETWEEN 0 AND 100)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE location_reports DROP COLUMN battery`);
  }
}
