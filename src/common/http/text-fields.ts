import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { MultilineText } from './text-input.js';

/** Text fields declared the same way in every body. */

/** Surrounding white space is not part of the value. */
export const Trim = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** Longest free-text note (trackers, status entries). */
const MAX_NOTES_LENGTH = 10_000;

/**
 * A name: trimmed, then 1..255 characters. With `optional` (update bodies) it may be left out but,
 * when given, never null or empty.
 */
export function NameField(doc: ApiPropertyOptions = {}, options: { optional?: boolean } = {}): PropertyDecorator {
  const schema = { minLength: 1, maxLength: 255, ...doc } as ApiPropertyOptions;
  return applyDecorators(
    options.optional ? ApiPropertyOptional(schema) : ApiProperty(schema),
    ...(options.optional ? [ValidateIf((_: object, value: unknown) => value !== undefined)] : []),
    Trim(),
    IsString(),
    Length(1, 255),
  );
}

/** Optional, nullable free text of at most MAX_NOTES_LENGTH characters; tab and line breaks allowed. */
export function NotesField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_NOTES_LENGTH }),
    IsOptional(),
    IsString(),
    MaxLength(MAX_NOTES_LENGTH),
    MultilineText(),
  );
}
