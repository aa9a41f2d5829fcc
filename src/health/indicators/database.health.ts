import { Injectable } from '@nestjs/common';
import { TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { COMPONENT_TIMEOUT_MS } from './component-timeout.js';

/** `database` component: `SELECT 1` through the application's pool (contract §8). */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly typeorm: TypeOrmHealthIndicator,
    private readonly dataSource: DataSource,
  ) {}

  check() {
    return this.typeorm.pingCheck('database', { connection: this.dataSource }).withTimeout(COMPONENT_TIMEOUT_MS);
  }
}
