import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface PoolStats {
  size: number;
  total: number;
  idle: number;
  checkedOut: number;
  waiting: number;
}

interface PgPoolLike {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max: number };
}

/** Read-only view of the pg pool behind TypeORM (for health and metrics). */
@Injectable()
export class DatabasePool {
  constructor(private readonly dataSource: DataSource) {}

  stats(): PoolStats {
    const pool = (this.dataSource.driver as unknown as { master: PgPoolLike }).master;
    const size = pool.options.max;
    return {
      size,
      total: pool.totalCount,
      idle: pool.idleCount,
      checkedOut: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
    };
  }
}
