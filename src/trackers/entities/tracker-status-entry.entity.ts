import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { Relation } from 'typeorm';
import { TrackerEntity } from './tracker.entity.js';
import type { TrackerStatus } from './tracker-status.js';

@Entity('tracker_status_history')
export class TrackerStatusEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column('int', { name: 'tracker_id' }) trackerId: number;
  @ManyToOne(() => TrackerEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tracker_id' })
  tracker?: Relation<TrackerEntity>;
  @Column('text') status: TrackerStatus;
  @Column('timestamptz') timestamp: Date;
  @Column('int', { name: 'storage_location_id', nullable: true }) storageLocationId: number | null;
  @Column('int', { name: 'delivery_location_id', nullable: true }) deliveryLocationId: number | null;
  @Column('text', { nullable: true }) notes: string | null;
  @Column('int', { name: 'created_by', nullable: true }) createdBy: number | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
