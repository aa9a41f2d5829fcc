import { Controller, Get } from '@nestjs/common';
import { ApiExtraModels, ApiInternalServerErrorResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { BasicHealthResponse, PipelineHealthResponse, PipelineStepResponse, SimpleStatusResponse, SystemHealthResponse } from './dto/health.response.js';
import { HealthService } from './health.service.js';

const MACHINERY_FAILURE = { description: 'The health check itself failed: `{"detail":"Health check failed: <cause>"}`' };

@ApiTags('health')
// test_steps is a map whose values reference this schema.
@ApiExtraModels(PipelineStepResponse)
@Controller('health')
@Access('admin')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('basic')
  @ApiOperation({ summary: 'Database and cache store checks (fast; for polling and load balancers)' })
  @ApiOkResponse({ type: BasicHealthResponse, description: 'Always 200 when the check ran; failed components are `unhealthy` inside' })
  @ApiInternalServerErrorResponse(MACHINERY_FAILURE)
  basic(): Promise<BasicHealthResponse> {
    return this.health.basic();
  }

  @Get('status')
  @ApiOperation({ summary: 'Overall status from the basic checks' })
  @ApiOkResponse({ type: SimpleStatusResponse })
  @ApiInternalServerErrorResponse(MACHINERY_FAILURE)
  status(): Promise<SimpleStatusResponse> {
    return this.health.status();
  }

  @Get('pipeline')
  @ApiOperation({ summary: 'Tracker data pipeline checks (schema, aggregation freshness and rules, cache, status consistency)' })
  @ApiOkResponse({ type: PipelineHealthResponse })
  @ApiInternalServerErrorResponse(MACHINERY_FAILURE)
  pipeline(@CurrentScope() scope: AccessScope): Promise<PipelineHealthResponse> {
    return this.health.pipeline(scope);
  }

  @Get('system')
  @ApiOperation({ summary: 'Basic and pipeline checks combined, with a derived status and overall metrics' })
  @ApiOkResponse({ type: SystemHealthResponse })
  @ApiInternalServerErrorResponse(MACHINERY_FAILURE)
  system(@CurrentScope() scope: AccessScope): Promise<SystemHealthResponse> {
    return this.health.system(scope);
  }
}
