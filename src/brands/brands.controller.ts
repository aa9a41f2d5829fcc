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
import { BrandsService } from './brands.service.js';
import { CreateBrandDto, ListBrandsQuery, UpdateBrandDto } from './dto/brand.dto.js';
import { BrandResponse } from './dto/brand.response.js';


@ApiTags('brands')
@Controller('brands')
export class BrandsController {
  constructor(private readonly brands: BrandsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List visible brands (a user sees the brands of the clients in their client_list)' })
  @ApiOkResponse({ type: PageOf(BrandResponse) })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListBrandsQuery): Promise<Page<BrandResponse>> {
    return this.brands.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a brand' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiErrors(ERRORS.brandNotFound)
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<BrandResponse> {
    return this.brands.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a brand (admin)' })
  @ApiCreatedResponse({ type: BrandResponse })
  @ApiErrors(ERRORS.brandExists(), ERRORS.validationFailed, ERRORS.invalidField('client_id', 'client does not exist'))
  create(@CurrentScope() scope: AccessScope, @Body() body: CreateBrandDto): Promise<BrandResponse> {
    return this.brands.create(scope, body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a brand (admin; partial body allowed; a new client_id moves its runs and trackers)' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiErrors(ERRORS.brandNotFound, ERRORS.brandExists(), ERRORS.validationFailed, ERRORS.invalidField('client_id', 'client does not exist'))
  update(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Body() body: UpdateBrandDto): Promise<BrandResponse> {
    return this.brands.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a brand (admin); answers the deleted brand' })
  @ApiOkResponse({ type: BrandResponse })
  @ApiErrors(ERRORS.brandNotFound, ERRORS.stillReferencedBy('Brand', 'production runs'))
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<BrandResponse> {
    return this.brands.delete(scope, id);
  }
}
