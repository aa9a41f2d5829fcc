import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type Role = 'admin' | 'user' | 'ingest';
export const ROLES: readonly Role[] = ['admin', 'user', 'ingest'];

@Entity('users')
export class UserEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text') name: string;
  @Column('text') email: string;
  @Column('text', { name: 'password_hash', select: false }) passwordHash: string;
  @Column('text', { array: true }) roles: Role[];
  @Column('int', { name: 'client_list', array: true }) clientList: number[];
  @Column('boolean', { name: 'notify_email' }) notifyEmail: boolean;
  @Column('boolean', { name: 'notify_ui' }) notifyUi: boolean;
  @Column('boolean', { name: 'is_active' }) isActive: boolean;
  /** Tokens issued at or before this instant are refused (password change, deactivation). */
  @Column('timestamptz', { name: 'tokens_valid_after', nullable: true, select: false }) tokensValidAfter: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
