import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
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
  @ApiErrors(
    { ...ERRORS.notAuthenticated, summary: 'Token required and missing' },
    { ...ERRORS.invalidCredentials, summary: 'Token wrong' },
    { ...ERRORS.notEnoughPermissions, summary: "Production without METRICS_TOKEN and the token is not an admin's" },
  )
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    res.setHeader('Content-Type', this.metrics.contentType);
    return this.metrics.render();
  }
}
