import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { BrandsService } from './brands.service.js';
import { CreateBrandDto, ListBrandsQuery, UpdateBrandDto } from './dto/brand.dto.js';
import { BrandResponse } from './dto/brand.response.js';

const NOT_FOUND = 'Missing, or of a client not in the caller\'s client_list: `{"detail":"Brand not found"}`';
const INVALID = 'Invalid id, query or body: `{"detail":"Validation failed: ...","errors":[...]}`';

@ApiTags('brands')
@Controller('brands')
export class BrandsController {
  constructor(private readonly brands: BrandsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List visible brands (a user sees the brands of the clients in their client_list)' })
  @ApiOkResponse({ type: PageOf(BrandResponse) })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListBrandsQuery): Promise<Page<BrandResponse>> {
    return this.brands.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a brand' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<BrandResponse> {
    return this.brands.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a brand (admin)' })
  @ApiCreatedResponse({ type: BrandResponse })
  @ApiConflictResponse({ description: 'Name already used by the client (case-insensitive): `{"detail":"Brand \'NAME\' already exists for client ID"}`' })
  @ApiUnprocessableEntityResponse({ description: `${INVALID}; an unknown client_id is \`client_id: client does not exist\`` })
  create(@CurrentScope() scope: AccessScope, @Body() body: CreateBrandDto): Promise<BrandResponse> {
    return this.brands.create(scope, body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a brand (admin; partial body allowed; a new client_id moves its runs and trackers)' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: 'Name already used by another brand of the client: `{"detail":"Brand \'NAME\' already exists for client ID"}`' })
  @ApiUnprocessableEntityResponse({ description: `${INVALID}; an unknown client_id is \`client_id: client does not exist\`` })
  update(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Body() body: UpdateBrandDto): Promise<BrandResponse> {
    return this.brands.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a brand (admin); answers the deleted brand' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: 'Production runs still belong to it: `{"detail":"Brand is still referenced by production runs"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<BrandResponse> {
    return this.brands.delete(scope, id);
  }
}
