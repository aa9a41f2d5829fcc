import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Shared shape of the hourly and daily aggregates: the winning eligible report of a bucket. */
abstract class LocationBucket {
  @PrimaryColumn('int', { name: 'tracker_id' }) trackerId: number;
  @PrimaryColumn('timestamptz') bucket: Date;
  @Column('bigint', { name: 'report_id' }) reportId: string;
  @Column('timestamptz', { name: 'reported_at' }) reportedAt: Date;
  @Column('double precision') latitude: number;
  @Column('double precision') longitude: number;
  @Column('int') confidence: number;
}

@Entity('location_history_hourly')
export class LocationHistoryHourlyEntity extends LocationBucket {}

@Entity('location_history_daily')
export class LocationHistoryDailyEntity extends LocationBucket {
  /** Hourly rows of this (tracker, UTC day); kept by database triggers (migration 1763750000000). */
  @Column('int', { name: 'hourly_buckets', default: 0 }) hourlyBuckets: number;
}
