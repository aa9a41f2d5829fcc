import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { PositiveId } from '../../common/http/id-field.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { NameField } from '../../common/http/text-fields.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';

export class CreateBrandDto {
  @NameField({ example: 'Acme Premium', description: 'Unique per client (case-insensitive); trimmed.' })
  name: string;

  @ApiProperty({ ...ID_SCHEMA, description: 'Owning client; an unknown id is 422.' })
  @PositiveId()
  client_id: number;
}

/** PUT body: every field optional (partial update); a given field may not be null. */
export class UpdateBrandDto {
  @NameField({}, { optional: true })
  name?: string;

  @ApiPropertyOptional({
    ...ID_SCHEMA,
    description: "Moving a brand moves its production runs (and their trackers) to the new client's scope.",
  })
  @ValidateIf((_, value) => value !== undefined)
  @PositiveId()
  client_id?: number;
}

export class ListBrandsQuery extends PaginationQuery {
  @OptionalIdField({}, { fromQuery: true })
  client_id?: number;

  @ApiPropertyOptional({ description: 'Case-insensitive substring of the brand name.' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}
