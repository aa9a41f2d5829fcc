import { Controller, Get, Headers, Inject, Res, UnauthorizedException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { Public } from '../common/auth/access.decorator.js';
import { INVALID_CREDENTIALS, NOT_AUTHENTICATED } from '../common/auth/auth.guard.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { MetricsService } from './metrics.service.js';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Public to the JWT guard: scrapers hold no user token. METRICS_TOKEN, when set, is the credential.
  @Get()
  @Public()
  @ApiOperation({ summary: 'Prometheus metrics (no /api/v1 prefix); requires `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format', schema: { type: 'string' } })
  @ApiUnauthorizedResponse({ description: 'METRICS_TOKEN is set and the bearer token is missing or wrong' })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) res: Response): Promise<string> {
    this.authorize(authorization);
    res.setHeader('Content-Type', this.metrics.contentType);
    return this.metrics.render();
  }

  private authorize(authorization: string | undefined): void {
    const expected = this.config.metricsToken;
    if (!expected) return;
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) throw new UnauthorizedException({ detail: NOT_AUTHENTICATED });
    const given = Buffer.from(match[1]);
    const wanted = Buffer.from(expected);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw new UnauthorizedException({ detail: INVALID_CREDENTIALS });
  }
}
