import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox claim orders due rows by (next_attempt_at, id). Rows queued by one transaction share
 * next_attempt_at (its now()), so an index on that column alone left PostgreSQL sorting every pending
 * row on each claim; with the id in the index a claim reads only the rows it takes.
 */
export class OutboxDueOrder1764050000000 implements MigrationInterface {
  name = 'OutboxDueOrder1764050000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP INDEX webhook_deliveries_due_idx;
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
      DROP INDEX mail_digests_due_idx;
      CREATE INDEX mail_digests_due_idx ON mail_digests (next_attempt_at, id) WHERE state = 'queued';`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      DROP INDEX webhook_deliveries_due_idx;
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      DROP INDEX mail_digests_due_idx;
      CREATE INDEX mail_digests_due_idx ON mail_digests (next_attempt_at) WHERE state = 'queued';`);
  }
}
