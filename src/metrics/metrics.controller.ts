import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/auth/access.decorator.js';
import { MetricsAccessGuard } from './metrics-access.guard.js';
import { MetricsService } from './metrics.service.js';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  // Public to the JWT guard: scrapers hold no user token. MetricsAccessGuard decides instead.
  @Get()
  @Public()
  @UseGuards(MetricsAccessGuard)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Prometheus metrics (no /api/v1 prefix)',
    description:
      'With METRICS_TOKEN set: requires `Authorization: Bearer <METRICS_TOKEN>` (user tokens are not accepted). ' +
      'Without it: an admin bearer token in production (NODE_ENV=production), no token otherwise.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format', schema: { type: 'string' } })
  @ApiUnauthorizedResponse({ description: 'Token required and missing or wrong: `{"detail":"Not authenticated"}` / `{"detail":"Could not validate credentials"}`' })
  @ApiForbiddenResponse({ description: 'Production without METRICS_TOKEN and the token is not an admin\'s: `{"detail":"Not enough permissions"}`' })
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    res.setHeader('Content-Type', this.metrics.contentType);
    return this.metrics.render();
  }
}
