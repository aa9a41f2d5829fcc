import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { COMPONENT_TIMEOUT_MS } from './component-timeout.js';

/**
 * `database` component: `SELECT 1` through the application's pool (contract §8). A custom
 * indicator rather than Terminus' TypeOrmHealthIndicator: that one probes for its peer packages
 * with CommonJS `require`, which cannot load the ESM-only @nestjs/typeorm 12 under Jest.
 */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  check() {
    return this.health
      .check('database')
      .attempt(async () => {
        await this.dataSource.query('SELECT 1');
        return {};
      })
      .withTimeout(COMPONENT_TIMEOUT_MS);
  }
}
