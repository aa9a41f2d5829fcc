import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A raw report as received; `eligible` records the aggregation rules' verdict at insert time. */
@Entity('location_reports')
export class LocationReportEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column('int', { name: 'tracker_id' }) trackerId: number;
  @Column('timestamptz') timestamp: Date;
  @Column('double precision') latitude: number;
  @Column('double precision') longitude: number;
  @Column('int') confidence: number;
  @Column('double precision', { name: 'accuracy_m', nullable: true }) accuracyM: number | null;
  @Column('varchar', { length: 64, nullable: true }) source: string | null;
  @Column('boolean') eligible: boolean;
  @Column('timestamptz', { name: 'received_at' }) receivedAt: Date;
}
