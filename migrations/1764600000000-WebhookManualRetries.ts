import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery retried by hand is attempted even while its webhook is disabled: `manual_retry` marks it
 * until that attempt is recorded (the worker's claim honours it; the webhook's other pending
 * deliveries keep waiting for it to be enabled again).
 */
export class WebhookManualRetries1764600000000 implements MigrationInterface {
  name = 'WebhookManualRetries1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_deliveries ADD COLUMN manual_retry boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE webhook_deliveries DROP COLUMN manual_retry`);
  }
}
