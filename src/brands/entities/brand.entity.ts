import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Relation } from 'typeorm';
import { ClientEntity } from '../../clients/entities/client.entity.js';

@Entity('brands')
export class BrandEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text') name: string;
  @Column('int', { name: 'client_id' }) clientId: number;
  @ManyToOne(() => ClientEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'client_id' })
  client?: Relation<ClientEntity>;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
