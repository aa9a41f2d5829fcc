import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';

/** The pg pool behind TypeORM's DataSource (TypeORM keeps it on its driver, untyped). */
export function pgPool(dataSource: DataSource): pg.Pool {
  return (dataSource.driver as unknown as { master: pg.Pool }).master;
}

interface PoolStats {
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
    const pool = pgPool(this.dataSource) as unknown as PgPoolLike;
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
