import { ApiProperty } from '@nestjs/swagger';
import { isoUtc } from './timestamps.js';

/** When a reference-data row was created and last changed (UTC, milliseconds). */
export class TimestampedResponse {
  @ApiProperty({ example: '2026-11-21T10:04:05.123Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:04:05.123Z' }) updated_at: string;
}

/** The wire form of a row's `created_at` and `updated_at`. */
export function timestampsOf(row: { created_at: Date | string; updated_at: Date | string }): TimestampedResponse {
  return { created_at: isoUtc(row.created_at) as string, updated_at: isoUtc(row.updated_at) as string };
}
