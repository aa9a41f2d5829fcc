import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per open notification stream, on whichever instance holds it, so that the per-user cap
 * of concurrent streams holds across instances. A stream takes its slot under a per-user advisory
 * lock and gives it back when it ends; its instance renews `renewed_at` while it is open, so the
 * slot of an instance that died without closing its streams stops counting once it is stale.
 */
export class NotificationStreamSlots1763990000000 implements MigrationInterface {
  name = 'NotificationStreamSlots1763990000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE notification_stream_slots (
        id uuid PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        instance_id uuid NOT NULL,
        opened_at timestamptz NOT NULL DEFAULT now(),
        renewed_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX notification_stream_slots_user_idx ON notification_stream_slots (user_id);
      CREATE INDEX notification_stream_slots_instance_idx ON notification_stream_slots (instance_id);`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE notification_stream_slots`);
  }
}
