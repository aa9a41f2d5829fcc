import { Controller, Get } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { Access } from '../common/auth/access.decorator.js';
import { WholeSystemScope } from '../common/auth/current-user.decorator.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import {
  BasicHealthResponse,
  PipelineHealthResponse,
  PipelineStepResponse,
  SimpleStatusResponse,
  SystemHealthResponse,
} from './dto/health.response.js';
import { HealthService } from './health.service.js';

@ApiTags('health')
// test_steps is a map whose values reference this schema.
@ApiExtraModels(PipelineStepResponse)
@Controller('health')
@Access('admin')
// Every check answers its result, unhealthy parts included; a 500 means the checking itself failed.
@ApiErrors(ERRORS.healthCheckFailed())
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('basic')
  @ApiOperation({ summary: 'Database and cache store checks (fast; for polling and load balancers)' })
  @ApiOkResponse({
    type: BasicHealthResponse,
    description: 'Always 200 when the check ran; failed components are `unhealthy` inside',
  })
  basic(): Promise<BasicHealthResponse> {
    return this.health.basic();
  }

  @Get('status')
  @ApiOperation({ summary: 'Overall status from the basic checks' })
  @ApiOkResponse({ type: SimpleStatusResponse })
  status(): Promise<SimpleStatusResponse> {
    return this.health.status();
  }

  @Get('pipeline')
  @ApiOperation({
    summary: 'Tracker data pipeline checks (schema, aggregation freshness and rules, cache, status consistency)',
  })
  @ApiOkResponse({ type: PipelineHealthResponse })
  pipeline(@WholeSystemScope() scope: AccessScope): Promise<PipelineHealthResponse> {
    return this.health.pipeline(scope);
  }

  @Get('system')
  @ApiOperation({ summary: 'Basic and pipeline checks combined, with a derived status and overall metrics' })
  @ApiOkResponse({ type: SystemHealthResponse })
  system(@WholeSystemScope() scope: AccessScope): Promise<SystemHealthResponse> {
    return this.health.system(scope);
  }
}
