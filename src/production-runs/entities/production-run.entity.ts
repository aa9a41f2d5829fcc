import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Relation } from 'typeorm';
import { BrandEntity } from '../../brands/entities/brand.entity.js';

@Entity('production_runs')
export class ProductionRunEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text') description: string;
  @Column('int', { name: 'brand_id' }) brandId: number;
  @ManyToOne(() => BrandEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'brand_id' })
  brand?: Relation<BrandEntity>;
  /** The brand's client, maintained by a database trigger (read-only here). */
  @Column({ type: 'int', name: 'client_id', insert: false, update: false }) clientId: number;
  @Column('timestamptz', { name: 'start_date', nullable: true }) startDate: Date | null;
  @Column('timestamptz', { name: 'end_date', nullable: true }) endDate: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
