import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('images')
export class ImageEntity {
  @PrimaryGeneratedColumn() id: number;
  @Column('text', { name: 'original_filename' }) originalFilename: string;
  @Column('text', { name: 'storage_filename' }) storageFilename: string;
  @Column('text', { name: 'mime_type' }) mimeType: string;
  @Column('int') size: number;
  @Column('int') width: number;
  @Column('int') height: number;
  @Column('int', { name: 'uploaded_by', nullable: true }) uploadedBy: number | null;
  @Column('timestamptz', { name: 'uploaded_at' }) uploadedAt: Date;
}
