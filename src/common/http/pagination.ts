import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_INT4 } from '../int4.js';
import { IsIntInRange, QueryInt } from './query-transforms.js';
import { COUNT_SCHEMA } from '../openapi/schema-types.js';

const DEFAULT_PAGE_LIMIT = 50;
const MAX_PAGE_LIMIT = 1000;

/**
 * `skip`/`limit` of every list. List query DTOs extend this. Both are plain digits;
 * skip is bounded by the largest int4 so every value is one the database takes as an offset.
 */
export class PaginationQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_INT4, default: 0 })
  @QueryInt()
  @IsIntInRange(0, MAX_INT4)
  skip: number = 0;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @QueryInt()
  @IsIntInRange(1, MAX_PAGE_LIMIT)
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
    @ApiProperty(COUNT_SCHEMA) total: number;
    @ApiProperty(COUNT_SCHEMA) page: number;
    @ApiProperty(COUNT_SCHEMA) size: number;
    @ApiProperty(COUNT_SCHEMA) pages: number;
  }
  Object.defineProperty(PageDto, 'name', { value: `${item.name.replace(/Response$/, '')}Page` });
  pageClasses.set(item, PageDto);
  return PageDto;
}
