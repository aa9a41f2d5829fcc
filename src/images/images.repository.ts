import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccessScope } from '../common/auth/access-scope.js';

export interface ImageRow {
  id: number;
  original_filename: string;
  storage_filename: string;
  mime_type: string;
  size: number;
  width: number;
  height: number;
  uploaded_by: number | null;
  uploaded_at: Date;
}

const IMAGE_COLUMNS = 'id, original_filename, storage_filename, mime_type, size, width, height, uploaded_by, uploaded_at';
const NEWEST_FIRST = 'ORDER BY uploaded_at DESC, id DESC';

/**
 * SQL for images. Images belong to no client: every admin and user may read them all
 * (contract §1), so reads ignore the scope's clients. Writes use the scope's identity: only an
 * admin or the uploader may delete.
 */
@Injectable()
export class ImagesRepository {
  constructor(private readonly db: DataSource) {}

  async list(_scope: AccessScope, page: { skip: number; limit: number }): Promise<{ rows: ImageRow[]; total: number }> {
    const [rows, [count]] = await Promise.all([
      this.db.query<ImageRow[]>(`SELECT ${IMAGE_COLUMNS} FROM images ${NEWEST_FIRST} OFFSET $1 LIMIT $2`, [page.skip, page.limit]),
      this.db.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM images`),
    ]);
    return { rows, total: count.total };
  }

  async findById(_scope: AccessScope, id: number): Promise<ImageRow | null> {
    const rows = await this.db.query<ImageRow[]>(`SELECT ${IMAGE_COLUMNS} FROM images WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async findByStorageFilename(_scope: AccessScope, storageFilename: string): Promise<ImageRow | null> {
    const rows = await this.db.query<ImageRow[]>(`SELECT ${IMAGE_COLUMNS} FROM images WHERE storage_filename = $1`, [storageFilename]);
    return rows[0] ?? null;
  }

  async insert(scope: AccessScope, image: Omit<ImageRow, 'id' | 'uploaded_by' | 'uploaded_at'>): Promise<ImageRow> {
    const rows = await this.db.query<ImageRow[]>(
      `INSERT INTO images (original_filename, storage_filename, mime_type, size, width, height, uploaded_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${IMAGE_COLUMNS}`,
      [image.original_filename, image.storage_filename, image.mime_type, image.size, image.width, image.height, scope.userId],
    );
    return rows[0];
  }

  /** Deletes the image if the scope may (admin, or its uploader); null when nothing was deleted. */
  async deleteIfAllowed(scope: AccessScope, id: number): Promise<ImageRow | null> {
    const params: unknown[] = [id];
    let allowed = 'TRUE';
    if (!scope.all) {
      params.push(scope.userId);
      allowed = `uploaded_by = $${params.length}`;
    }
    const rows = await this.db.query<[ImageRow[], number]>(`DELETE FROM images WHERE id = $1 AND ${allowed} RETURNING ${IMAGE_COLUMNS}`, params);
    return rows[0][0] ?? null;
  }
}
