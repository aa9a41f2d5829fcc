import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../common/auth/auth-user.js';
import { PositiveId } from '../../common/http/id-field.js';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';
import { PaginationQuery } from '../../common/http/pagination.js';
import { Trim } from '../../common/http/text-fields.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';

/** Longest `client_ids` of a key (a user's client_list may hold 10 000; a key names a few). */
export const MAX_KEY_CLIENT_IDS = 1000;

/** `POST /api-keys`. */
export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'ERP nightly sync' })
  @Trim()
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiProperty({
    enum: API_KEY_SCOPES,
    isArray: true,
    minItems: 1,
    description:
      '`read`: every GET the owner may call (but API keys and webhooks); `write`: every other method the owner may call (but users, API keys, webhooks, auth and location reports); `ingest`: location reports; `webhooks`: every webhook route.',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(API_KEY_SCOPES.length * 2)
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes: ApiKeyScope[];

  @ApiPropertyOptional({
    ...ID_SCHEMA,
    isArray: true,
    minItems: 1,
    maxItems: MAX_KEY_CLIENT_IDS,
    nullable: true,
    description:
      'Narrows the key to these clients (each an existing client the owner can see; an admin owner: any client). Left out or null: everything the owner sees.',
  })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_KEY_CLIENT_IDS)
  @PositiveId({ each: true })
  client_ids?: number[] | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the key stops working: in the future, at most 2 years ahead. Left out or null: never.',
  })
  @IsOptional()
  @IsoDateTime()
  expires_at?: Date | null;

  @OptionalIdField({
    description:
      'Admin only: the user the key is created for, who becomes its owner (null: the admin). A non-admin sending the field, null included, gets 403.',
  })
  user_id?: number | null;
}

/** `GET /api-keys`. */
export class ListApiKeysQuery extends PaginationQuery {
  @OptionalIdField(
    { description: 'Only the keys of this user (a non-admin sees only their own).' },
    { fromQuery: true },
  )
  user_id?: number;
}
