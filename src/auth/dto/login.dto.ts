import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { OpaqueText } from '../../common/http/text-input.js';

/**
 * OAuth2 password form (`application/x-www-form-urlencoded`; JSON and multipart accepted too).
 * `grant_type`, `scope`, `client_id` and `client_secret` are part of that form, so they are
 * accepted (and ignored) rather than rejected as unknown fields.
 */
export class LoginFormDto {
  @ApiProperty({ description: 'The e-mail address', example: 'admin@example.com' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(320)
  @OpaqueText()
  username: string;

  @ApiProperty({ format: 'password' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  @OpaqueText()
  password: string;

  @ApiPropertyOptional({ example: 'password' }) @IsOptional() @IsString() @MaxLength(64) grant_type?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) scope?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) client_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) client_secret?: string;
}

export class LoginJsonDto {
  @ApiProperty({ example: 'admin@example.com' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(320)
  @OpaqueText()
  email: string;

  @ApiProperty({ format: 'password' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  @OpaqueText()
  password: string;
}

export class RefreshDto {
  @ApiProperty({ description: 'A refresh token from login or a previous refresh' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(4096)
  @OpaqueText()
  refresh_token: string;
}
