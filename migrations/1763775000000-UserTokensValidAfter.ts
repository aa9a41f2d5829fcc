import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A per-user token epoch: a token (access or refresh) issued at or before `tokens_valid_after` is
 * refused. Set when the password changes or the account is deactivated, so every token issued
 * before is dead on every instance at once (the user row is read on every authenticated request).
 * NULL: no epoch, every otherwise valid token is accepted.
 */
export class UserTokensValidAfter1763775000000 implements MigrationInterface {
  name = 'UserTokensValidAfter1763775000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE users DROP COLUMN tokens_valid_after`);
  }
}
