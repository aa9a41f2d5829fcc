import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { CreateProductionRunDto, ListProductionRunsQuery, UpdateProductionRunDto } from './dto/production-run.dto.js';
import { ProductionRunResponse } from './dto/production-run.response.js';
import { ProductionRunsService } from './production-runs.service.js';

/** The 422s of a write: any field, an unknown brand, and an end before the start. */
const INVALID_WRITE = [
  ERRORS.validationFailed,
  ERRORS.invalidField('brand_id', 'brand does not exist'),
  ERRORS.invalidField('end_date', 'must not be before start_date'),
];

/** CRUD of runs. The analytics routes under /production-runs/{id}/analytics live in the analytics module. */
@ApiTags('production-runs')
@Controller('production-runs')
export class ProductionRunsController {
  constructor(private readonly runs: ProductionRunsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List visible production runs, with tracker_count' })
  @ApiOkResponse({ type: PageOf(ProductionRunResponse) })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListProductionRunsQuery): Promise<Page<ProductionRunResponse>> {
    return this.runs.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a production run' })
  @ApiOkResponse({ type: ProductionRunResponse })
  @ApiErrors(ERRORS.productionRunNotFound)
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ProductionRunResponse> {
    return this.runs.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: "Create a production run (admin); client_id is the brand's client" })
  @ApiCreatedResponse({ type: ProductionRunResponse })
  @ApiErrors(...INVALID_WRITE)
  create(@CurrentScope() scope: AccessScope, @Body() body: CreateProductionRunDto): Promise<ProductionRunResponse> {
    return this.runs.create(scope, body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a production run (admin; partial body allowed; null clears a date)' })
  @ApiOkResponse({ type: ProductionRunResponse })
  @ApiErrors(ERRORS.productionRunNotFound, ...INVALID_WRITE)
  update(
    @CurrentScope() scope: AccessScope,
    @IdParam() id: number,
    @Body() body: UpdateProductionRunDto,
  ): Promise<ProductionRunResponse> {
    return this.runs.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a production run (admin); answers the deleted run' })
  @ApiOkResponse({ type: ProductionRunResponse })
  @ApiErrors(ERRORS.productionRunNotFound, ERRORS.stillReferencedBy('Production run', 'trackers'))
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ProductionRunResponse> {
    return this.runs.delete(scope, id);
  }
}
