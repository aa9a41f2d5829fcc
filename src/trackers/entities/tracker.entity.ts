import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Relation } from 'typeorm';
import { ProductionRunEntity } from '../../production-runs/entities/production-run.entity.js';
import type { TrackerStatus } from './tracker-status.js';

@Entity('trackers')
export class TrackerEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text') name: string;
  @Column('int', { name: 'production_run_id' }) productionRunId: number;
  @ManyToOne(() => ProductionRunEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'production_run_id' })
  productionRun?: Relation<ProductionRunEntity>;
  @Column('text') status: TrackerStatus;
  @Column('int', { name: 'storage_location_id', nullable: true }) storageLocationId: number | null;
  @Column('int', { name: 'delivery_location_id', nullable: true }) deliveryLocationId: number | null;
  @Column('text', { nullable: true }) notes: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
