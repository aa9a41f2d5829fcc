import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { MAX_INT4 } from './id-field.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 1000;

/** `skip`/`limit` of every list (contract §0). List query DTOs extend this. */
export class PaginationQuery {
  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(MAX_INT4)
  skip: number = 0;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

export function toPage<T>(items: T[], total: number, query: { skip: number; limit: number }): Page<T> {
  return {
    items,
    total,
    page: Math.floor(query.skip / query.limit) + 1,
    size: query.limit,
    pages: total === 0 ? 0 : Math.ceil(total / query.limit),
  };
}

/** OpenAPI schema for Page<Item>: `@ApiOkResponse({ type: PageOf(ItemResponse) })`. */
const pageClasses = new Map<unknown, unknown>();
export function PageOf<T>(item: new (...args: never[]) => T): new () => Page<T> {
  const existing = pageClasses.get(item);
  if (existing) return existing as new () => Page<T>;
  class PageDto {
    @ApiProperty({ type: [item] }) items: T[];
    @ApiProperty() total: number;
    @ApiProperty() page: number;
    @ApiProperty() size: number;
    @ApiProperty() pages: number;
  }
  Object.defineProperty(PageDto, 'name', { value: `${item.name.replace(/Response$/, '')}Page` });
  pageClasses.set(item, PageDto);
  return PageDto;
}
