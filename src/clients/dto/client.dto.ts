import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PaginationQuery } from '../../common/http/pagination.js';
import { NameField } from '../../common/http/text-fields.js';

export class CreateClientDto {
  @NameField({ example: 'Acme Logistics', description: 'Unique (case-insensitive); trimmed.' })
  name: string;
}

/** PUT body: every field optional (partial update); a given field may not be null. */
export class UpdateClientDto {
  @NameField({ description: 'Unique (case-insensitive); trimmed.' }, { optional: true })
  name?: string;
}

export class ListClientsQuery extends PaginationQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the client name.' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}
