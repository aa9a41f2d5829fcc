import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { OpaqueText } from '../../common/http/text-input.js';

/**
 * A credential the login handler checks itself (a wrong one is the same 401 as any other): a
 * non-empty string of at most `maxLength`, whose characters the text rule leaves alone.
 */
function Credential(maxLength: number, doc: ApiPropertyOptions = {}): PropertyDecorator {
  return applyDecorators(ApiProperty(doc), IsString(), IsNotEmpty(), MaxLength(maxLength), OpaqueText());
}

/**
 * OAuth2 password form (`application/x-www-form-urlencoded`; JSON and multipart accepted too).
 * `grant_type`, `scope`, `client_id` and `client_secret` are part of that form, so they are
 * accepted (and ignored) rather than rejected as unknown fields.
 */
export class LoginFormDto {
  @Credential(320, { description: 'The e-mail address', example: 'admin@example.com' })
  username: string;

  @Credential(1024, { format: 'password' })
  password: string;

  @ApiPropertyOptional({ example: 'password' }) @IsOptional() @IsString() @MaxLength(64) grant_type?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) scope?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) client_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) client_secret?: string;
}

export class LoginJsonDto {
  @Credential(320, { example: 'admin@example.com' })
  email: string;

  @Credential(1024, { format: 'password' })
  password: string;
}

export class RefreshDto {
  @Credential(4096, { description: 'A refresh token from login or a previous refresh' })
  refresh_token: string;
}
