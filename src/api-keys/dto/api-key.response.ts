import { ApiProperty } from '@nestjs/swagger';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../common/auth/auth-user.js';
import { isoUtc } from '../../common/http/timestamps.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import type { ApiKeyRow } from '../api-keys.repository.js';

const TIMESTAMP = { type: String, example: '2026-11-21T10:04:05.123Z' } as const;

/** An API key as listed: never its secret. */
export class ApiKeyResponse {
  @ApiProperty(ID_SCHEMA) id: number;
  @ApiProperty({ ...ID_SCHEMA, description: 'The owner: the key acts as this user.' }) user_id: number;
  @ApiProperty({ minLength: 1, maxLength: 100 }) name: string;
  @ApiProperty({
    pattern: '^[a-z0-9]{8}$',
    example: 'k3x9q2ab',
    description: 'Public part of the key (`tps_<prefix>_…`).',
  })
  prefix: string;
  @ApiProperty({ enum: API_KEY_SCOPES, isArray: true }) scopes: ApiKeyScope[];
  @ApiProperty({ ...ID_SCHEMA, isArray: true, nullable: true, description: 'null: not narrowed to clients.' })
  client_ids: number[] | null;
  @ApiProperty(TIMESTAMP) created_at: string;
  @ApiProperty({ ...TIMESTAMP, nullable: true }) expires_at: string | null;
  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'Kept to within a minute.' }) last_used_at: string | null;
  @ApiProperty({ ...TIMESTAMP, nullable: true }) revoked_at: string | null;
}

/** The answer to creating a key: the only time its text (with the secret) is shown. */
export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({
    pattern: '^tps_[a-z0-9]{8}_[A-Za-z0-9]{32,}$',
    example: 'tps_k3x9q2ab_Vq3yJ0mZrX8sKf2LhT6wNc1PbD4eUaG7iR9oS5tYzQx',
    description: 'The key: send it as `X-API-Key` or `Authorization: Bearer`. Shown only here; store it now.',
  })
  key: string;
}

export function toApiKeyResponse(row: ApiKeyRow): ApiKeyResponse {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    client_ids: row.client_ids,
    created_at: isoUtc(row.created_at) as string,
    expires_at: isoUtc(row.expires_at),
    last_used_at: isoUtc(row.last_used_at),
    revoked_at: isoUtc(row.revoked_at),
  };
}
