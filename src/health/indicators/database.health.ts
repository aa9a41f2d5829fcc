import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Db, sql } from '../../infrastructure/database/db.js';
import { componentCheck } from './component-timeout.js';

/**
 * `database` component: `SELECT 1` through the application's pool. A custom
 * indicator rather than Terminus' TypeOrmHealthIndicator: that one probes for its peer packages
 * with CommonJS `require`, which cannot load the ESM-only @nestjs/typeorm 12 under Jest.
 */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly db: Db,
  ) {}

  check() {
    return componentCheck(this.health, 'database', async () => {
      await this.db.execute(sql`SELECT 1`);
      return {};
    });
  }
}
