import { ApiProperty } from '@nestjs/swagger';
import { isoNoSuffix } from '../../common/http/timestamps.js';
import { IMAGE_TYPES } from '../image-types.js';
import type { ImageRow } from '../images.repository.js';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** The upload response: the subset of Image the API promises on upload. */
export class ImageUploadResponse {
  @ApiProperty({ ...ID_SCHEMA, example: 12 }) id: number;
  @ApiProperty({
    example: '/api/v1/images/0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png',
    description: 'Public address of the bytes',
  })
  url_path: string;
  @ApiProperty({
    example: 'logo.png',
    description: 'Name as uploaded: base name only, control characters removed, at most 255 characters',
  })
  original_filename: string;
  @ApiProperty({ enum: IMAGE_TYPES, example: 'image/png' }) mime_type: string;
  @ApiProperty({ ...COUNT_SCHEMA, example: 48213, description: 'Bytes' }) size: number;
  @ApiProperty({ ...COUNT_SCHEMA, example: 640, description: 'Pixels, as displayed (EXIF orientation applied)' })
  width: number;
  @ApiProperty({ ...COUNT_SCHEMA, example: 480, description: 'Pixels, as displayed (EXIF orientation applied)' })
  height: number;
}

export class ImageResponse extends ImageUploadResponse {
  @ApiProperty({
    example: '0b7c2a9e-5d6f-4e1a-9c3b-2f8d7e6a5b4c.png',
    description: 'Generated stored name (UUID + extension)',
  })
  storage_filename: string;
  @ApiProperty({ example: '2026-11-21T10:04:05.123', description: 'ISO 8601, UTC, no timezone suffix' })
  uploaded_at: string;
}

function imageUrlPath(storageFilename: string): string {
  return `/api/v1/images/${storageFilename}`;
}

export function toImageUploadResponse(row: ImageRow): ImageUploadResponse {
  return {
    id: row.id,
    url_path: imageUrlPath(row.storage_filename),
    original_filename: row.original_filename,
    mime_type: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
  };
}

export function toImageResponse(row: ImageRow): ImageResponse {
  return {
    id: row.id,
    original_filename: row.original_filename,
    storage_filename: row.storage_filename,
    mime_type: row.mime_type,
    size: row.size,
    width: row.width,
    height: row.height,
    url_path: imageUrlPath(row.storage_filename),
    uploaded_at: isoNoSuffix(row.uploaded_at),
  };
}
