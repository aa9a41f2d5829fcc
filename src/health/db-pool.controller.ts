import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { PoolHealthResponse } from './dto/health.response.js';
import { HealthService } from './health.service.js';

/** Environments in which the pool endpoint exists. */
export const DB_POOL_ENVIRONMENTS: readonly string[] = ['development', 'test'];

/** `GET /health/db-pool` — outside the /api/v1 prefix (excluded in app.setup.ts). */
@ApiTags('health')
@Controller()
@Access('admin')
export class DbPoolController {
  constructor(
    private readonly health: HealthService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('health/db-pool')
  @ApiOperation({ summary: 'Database pool usage (development and test environments only)' })
  @ApiOkResponse({ type: PoolHealthResponse })
  @ApiErrors({ ...ERRORS.notFound, summary: 'Not development or test' })
  dbPool(): PoolHealthResponse {
    // Also enforced before authentication by DbPoolAvailability; kept here so the handler never
    // answers outside development/test whatever the middleware wiring.
    if (!DB_POOL_ENVIRONMENTS.includes(this.config.nodeEnv)) throw new DomainError(ERRORS.notFound);
    return this.health.dbPool();
  }
}
