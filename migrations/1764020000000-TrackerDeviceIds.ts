import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trackers gain the identity devices and relays report under: `device_id`, optional, unique among
 * all trackers (case-sensitive), 1..128 characters of [A-Za-z0-9._:-].
 */
export class TrackerDeviceIds1764020000000 implements MigrationInterface {
  name = 'TrackerDeviceIds1764020000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE trackers ADD COLUMN device_id text
        CONSTRAINT trackers_device_id_format CHECK (device_id ~ '^[A-Za-z0-9._:-]{1,128}$');
      CREATE UNIQUE INDEX trackers_device_id_key ON trackers (device_id) WHERE device_id IS NOT NULL;`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE trackers DROP COLUMN device_id`);
  }
}
