import { Body, Controller, Get, Header, HttpCode, Inject, Post, Req, Res, UseInterceptors } from '@nestjs/common';
import { NoFilesInterceptor } from '@nestjs/platform-express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/access.decorator.js';
import { KeyScope } from '../common/auth/api-key.js';
import { bearerToken } from '../common/auth/bearer.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { AUTH_LOGIN_ERRORS } from './auth.errors.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { toUserResponse } from '../users/dto/user.response.js';
import { AuthService } from './auth.service.js';
import { LoginFormDto, LoginJsonDto, RefreshDto } from './dto/login.dto.js';
import { DetailResponse, LoginJsonResponse, RefreshResponse, TokenResponse } from './dto/token.response.js';
import { clearRefreshCookie, REFRESH_COOKIE, setRefreshCookie } from './refresh-cookie.js';

/** Multipart login carries only text fields; small limits keep it from being an upload path. */
const multipartFields = NoFilesInterceptor({ limits: { fields: 10, fieldSize: 8 * 1024, parts: 10 } });

/**
 * Token responses are never stored by browsers or proxies (`Cache-Control: no-store`, RFC 6749 §5.1).
 * Public, but no API key calls them: a request presenting one answers 403 (401 when the key is bad).
 */
@ApiTags('auth')
@Public()
@KeyScope('none')
@ApiErrors(
  { ...ERRORS.invalidCredentials, summary: 'An API key was presented and is not valid' },
  { ...ERRORS.notEnoughPermissions, summary: 'An API key was presented: no key calls the auth routes' },
  ERRORS.tooManyKeyAttempts,
)
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('login')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @UseInterceptors(multipartFields)
  @ApiOperation({ summary: 'OAuth2 password login (username = e-mail); sets the refresh_token cookie' })
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json', 'multipart/form-data')
  @ApiBody({ type: LoginFormDto })
  @ApiOkResponse({
    type: TokenResponse,
    description: 'Access token; the refresh token is set as the `refresh_token` cookie',
  })
  @ApiErrors(AUTH_LOGIN_ERRORS.incorrectLogin, AUTH_LOGIN_ERRORS.tooManyLoginAttempts, {
    ...ERRORS.validationFailed,
    summary: 'username or password missing',
  })
  async login(
    @Body() body: LoginFormDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenResponse> {
    const result = await this.auth.login(body.username, body.password, clientIp(req));
    setRefreshCookie(res, result.refresh.token, this.config);
    return { access_token: result.access.token, token_type: 'bearer' };
  }

  @Post('login/json')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @ApiOperation({ summary: 'JSON login; returns the user too and sets the refresh_token cookie' })
  @ApiOkResponse({ type: LoginJsonResponse })
  @ApiErrors(AUTH_LOGIN_ERRORS.incorrectLogin, AUTH_LOGIN_ERRORS.tooManyLoginAttempts, {
    ...ERRORS.validationFailed,
    summary: 'email or password missing',
  })
  async loginJson(
    @Body() body: LoginJsonDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<LoginJsonResponse> {
    const result = await this.auth.login(body.email, body.password, clientIp(req));
    setRefreshCookie(res, result.refresh.token, this.config);
    return { access_token: result.access.token, token_type: 'bearer', user: toUserResponse(result.user) };
  }

  @Post('refresh')
  @Header('Cache-Control', 'no-store')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Exchange a refresh token for a new pair (rotation: the old one is revoked); also sets the cookie',
  })
  @ApiOkResponse({ type: RefreshResponse })
  @ApiErrors(AUTH_LOGIN_ERRORS.invalidRefreshToken)
  async refresh(@Body() body: RefreshDto, @Res({ passthrough: true }) res: Response): Promise<RefreshResponse> {
    const pair = await this.auth.refresh(body.refresh_token);
    setRefreshCookie(res, pair.refresh.token, this.config);
    return { access_token: pair.access.token, refresh_token: pair.refresh.token, token_type: 'bearer' };
  }

  @Get('refresh-cookie')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary:
      'New access token from the refresh_token cookie (sent by the browser; Path=/api/v1/auth); the cookie is rotated',
  })
  @ApiOkResponse({ type: TokenResponse })
  @ApiErrors(AUTH_LOGIN_ERRORS.refreshTokenMissing, AUTH_LOGIN_ERRORS.invalidRefreshToken)
  async refreshCookie(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<TokenResponse> {
    const token = cookie(req);
    if (!token) throw new DomainError(AUTH_LOGIN_ERRORS.refreshTokenMissing);
    const pair = await this.auth.refresh(token);
    setRefreshCookie(res, pair.refresh.token, this.config);
    return { access_token: pair.access.token, token_type: 'bearer' };
  }

  @Post('logout')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke the refresh cookie and the bearer access token (each when present and valid) and clear the cookie',
    description: 'Never fails for a missing, invalid or expired token.',
  })
  @ApiBearerAuth()
  @ApiOkResponse({ type: DetailResponse })
  async logout(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<DetailResponse> {
    await this.auth.logout(cookie(req), bearer(req));
    clearRefreshCookie(res, this.config);
    return { detail: 'Successfully logged out' };
  }
}

/** The client address as Express resolves it: with TRUST_PROXY only the proxy-appended hop counts. */
function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

function cookie(req: Request): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[REFRESH_COOKIE];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The access token exactly as the guard reads it, so logout revokes what the guard accepts. */
function bearer(req: Request): string | undefined {
  return bearerToken(req.headers.authorization);
}
