import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, raw, sql, type PagedRows } from '../infrastructure/database/db.js';
import type { Tables } from '../infrastructure/database/schema.js';

export type ImageRow = Tables['images'];

const IMAGE_COLUMNS = raw(
  'id, original_filename, storage_filename, mime_type, size, width, height, uploaded_by, uploaded_at',
);

/**
 * SQL for images. Images belong to no client: every admin and user may read them all, so reads
 * take no access scope. Writes use the scope's identity: the uploader is recorded, and only an
 * admin or the uploader may delete.
 */
@Injectable()
export class ImagesRepository {
  constructor(private readonly db: Db) {}

  /** Newest first. */
  list(page: { skip: number; limit: number }): Promise<PagedRows<ImageRow>> {
    return this.db.replica.page<ImageRow>(
      { columns: IMAGE_COLUMNS, from: sql`images`, where: [], orderBy: sql`uploaded_at DESC, id DESC` },
      page,
    );
  }

  findById(id: number): Promise<ImageRow | null> {
    return this.db.first<ImageRow>(sql`SELECT ${IMAGE_COLUMNS} FROM images WHERE id = ${id}`);
  }

  findByStorageFilename(storageFilename: string): Promise<ImageRow | null> {
    return this.db.first<ImageRow>(
      sql`SELECT ${IMAGE_COLUMNS} FROM images WHERE storage_filename = ${storageFilename}`,
    );
  }

  insert(scope: AccessScope, image: Omit<ImageRow, 'id' | 'uploaded_by' | 'uploaded_at'>): Promise<ImageRow> {
    return this.db.one<ImageRow>(
      sql`INSERT INTO images (original_filename, storage_filename, mime_type, size, width, height, uploaded_by)
       VALUES (${image.original_filename}, ${image.storage_filename}, ${image.mime_type}, ${image.size}, ${image.width}, ${image.height}, ${scope.userId})
       RETURNING ${IMAGE_COLUMNS}`,
    );
  }

  /** Deletes the image if the scope may (admin, or its uploader); null when nothing was deleted. */
  deleteIfAllowed(scope: AccessScope, id: number): Promise<ImageRow | null> {
    const allowed = scope.all ? raw('TRUE') : sql`uploaded_by = ${scope.userId}`;
    return this.db.first<ImageRow>(sql`DELETE FROM images WHERE id = ${id} AND ${allowed} RETURNING ${IMAGE_COLUMNS}`);
  }
}
