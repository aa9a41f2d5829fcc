import { crudController } from '../common/http/crud.controller.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { BRAND_ERRORS } from './brands.errors.js';
import { BrandsService } from './brands.service.js';
import { CreateBrandDto, ListBrandsQuery, UpdateBrandDto } from './dto/brand.dto.js';
import { BrandResponse } from './dto/brand.response.js';

const UNKNOWN_CLIENT = ERRORS.invalidField('client_id', 'client does not exist');

/** CRUD of brands: reads scoped to the caller's clients, admin writes. */
export class BrandsController extends crudController({
  path: 'brands',
  service: BrandsService,
  scoped: true,
  dto: { list: ListBrandsQuery, create: CreateBrandDto, update: UpdateBrandDto, response: BrandResponse },
  routes: {
    list: { summary: 'List visible brands (a user sees the brands of the clients in their client_list)' },
    get: { summary: 'Get a brand', errors: [BRAND_ERRORS.brandNotFound] },
    create: {
      summary: 'Create a brand (admin)',
      errors: [BRAND_ERRORS.brandExists(), ERRORS.validationFailed, UNKNOWN_CLIENT],
    },
    update: {
      summary: 'Update a brand (admin; partial body allowed; a new client_id moves its runs and trackers)',
      errors: [BRAND_ERRORS.brandNotFound, BRAND_ERRORS.brandExists(), ERRORS.validationFailed, UNKNOWN_CLIENT],
    },
    delete: {
      summary: 'Delete a brand (admin); answers the deleted brand',
      errors: [BRAND_ERRORS.brandNotFound, ERRORS.stillReferencedBy('Brand', 'production runs')],
    },
  },
}) {}
