import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';

const trim = Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

export class CreateClientDto {
  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Acme Logistics', description: 'Unique (case-insensitive); trimmed.' })
  @trim
  @IsString()
  @Length(1, 255)
  name: string;
}

/** PUT body: every field optional (partial update); a given field may not be null. */
export class UpdateClientDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255, description: 'Unique (case-insensitive); trimmed.' })
  @ValidateIf((_, value) => value !== undefined)
  @trim
  @IsString()
  @Length(1, 255)
  name?: string;
}

export class ListClientsQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the client name.' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}
