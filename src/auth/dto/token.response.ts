import { ApiProperty } from '@nestjs/swagger';
import { UserResponse } from '../../users/dto/user.response.js';

export class TokenResponse {
  @ApiProperty({ description: 'JWT access token (HS256)' }) access_token: string;
  @ApiProperty({ enum: ['bearer'], example: 'bearer' }) token_type: 'bearer';
}

export class LoginJsonResponse extends TokenResponse {
  @ApiProperty({ type: UserResponse }) user: UserResponse;
}

export class RefreshResponse extends TokenResponse {
  @ApiProperty({ description: 'The new refresh token (also set as the refresh_token cookie); the one sent is revoked' })
  refresh_token: string;
}

export class DetailResponse {
  @ApiProperty({ example: 'Successfully logged out' }) detail: string;
}
