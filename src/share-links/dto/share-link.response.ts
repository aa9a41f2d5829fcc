import { ApiProperty } from '@nestjs/swagger';
import { isoUtc } from '../../common/http/timestamps.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import type { ShareLinkRow } from '../share-links.repository.js';
import { shareLinkPath } from '../share-link-token.js';
import { LOCATION_PRECISIONS, type LocationPrecision } from './share-link.dto.js';

const TIMESTAMP = { type: String, example: '2026-11-21T10:04:05.123Z' } as const;

/** A share link. `token` and `url_path` are shown only in the answer to its creation (null elsewhere). */
export class ShareLinkResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty(ID_SCHEMA) tracker_id: number;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '/track/q3Vb0mZrX8sKf2LhT6wNc1PbD4eUaG7iR9oS5tYzQxA',
    description: '`/track/<token>`, the public page. Only in the answer to the creation.',
  })
  url_path: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    pattern: '^[A-Za-z0-9_-]{43}$',
    description: 'The link’s secret (256 bits). Shown only in the answer to the creation; only its hash is stored.',
  })
  token: string | null;
  @ApiProperty(TIMESTAMP) expires_at: string;
  @ApiProperty({ enum: LOCATION_PRECISIONS }) location_precision: LocationPrecision;
  @ApiProperty({ ...ID_SCHEMA, nullable: true, description: 'The user who created it (null once deleted).' })
  created_by: number | null;
  @ApiProperty(TIMESTAMP) created_at: string;
  @ApiProperty({ ...TIMESTAMP, nullable: true }) revoked_at: string | null;
}

export function toShareLinkResponse(row: ShareLinkRow, token: string | null = null): ShareLinkResponse {
  return {
    id: row.id,
    tracker_id: row.tracker_id,
    url_path: token === null ? null : shareLinkPath(token),
    token,
    expires_at: isoUtc(row.expires_at) as string,
    location_precision: row.location_precision,
    created_by: row.created_by,
    created_at: isoUtc(row.created_at) as string,
    revoked_at: isoUtc(row.revoked_at),
  };
}
