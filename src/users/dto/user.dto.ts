import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ROLES, type Role } from '../../common/auth/roles.js';
import { PositiveId } from '../../common/http/id-field.js';
import { OpaqueText } from '../../common/http/text-input.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { Trim } from '../../common/http/text-fields.js';

const MIN_PASSWORD_LENGTH = 8;

const trimLower = () => Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value));

/** A field that may be left out but, when given, not as null (every user column is NOT NULL). */
const NotNullWhenGiven = () => ValidateIf((_: object, value: unknown) => value !== undefined);

export class NotificationPreferencesDto {
  @ApiPropertyOptional({ default: true }) @NotNullWhenGiven() @IsBoolean() email?: boolean;
  @ApiPropertyOptional({ default: true }) @NotNullWhenGiven() @IsBoolean() ui?: boolean;
}

/**
 * `notification_preferences`: when given, an object (not null, not an array) of booleans. Nested
 * validation refuses what is not an object and walks arrays item by item, so arrays are refused
 * apart; both say the same, once.
 */
const MUST_BE_OBJECT = '$property must be an object';
const Preferences = () =>
  applyDecorators(
    ApiPropertyOptional({ type: NotificationPreferencesDto }),
    NotNullWhenGiven(),
    ValidateBy(
      { name: 'isObject', validator: { validate: (value) => !Array.isArray(value) } },
      { message: MUST_BE_OBJECT },
    ),
    ValidateNested({ message: MUST_BE_OBJECT }),
    Type(() => NotificationPreferencesDto),
  );

/** `POST /users` (admin). E-mails are stored trimmed and lower-cased; uniqueness ignores case. */
export class CreateUserDto {
  @ApiProperty({ minLength: 1, maxLength: 255 })
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiProperty({ format: 'email', maxLength: 254 })
  @trimLower()
  @IsString()
  @IsEmail({}, { message: 'must be an e-mail address' })
  @MaxLength(254)
  email: string;

  @ApiProperty({ format: 'password', minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, writeOnly: true })
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ enum: ROLES, isArray: true, default: ['user'] })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(ROLES, { each: true })
  roles?: Role[];

  @ApiPropertyOptional({
    ...ID_SCHEMA,
    isArray: true,
    default: [],
    description: 'Client ids this user may see (existing clients)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10_000)
  @PositiveId({ each: true })
  client_list?: number[];

  @Preferences()
  notification_preferences?: NotificationPreferencesDto;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

/** `PATCH /users/{id}` (admin): any field, none as null; a password is re-hashed. */
export class UpdateUserDto extends PartialType(CreateUserDto, { skipNullProperties: false }) {}

/**
 * `PATCH /users/me`: name, notification preferences and password. A new password needs
 * `current_password` (a stolen access token alone cannot take over the account).
 */
export class UpdateMeDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 })
  @IsOptional()
  @Trim()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @Preferences()
  notification_preferences?: NotificationPreferencesDto;

  @ApiPropertyOptional({ format: 'password', minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, writeOnly: true })
  @IsOptional()
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(1024)
  password?: string;

  @ApiPropertyOptional({ format: 'password', writeOnly: true, description: 'Required together with `password`' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  @OpaqueText()
  current_password?: string;
}
