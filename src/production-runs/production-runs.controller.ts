import { crudController } from '../common/http/crud.controller.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PRODUCTION_RUN_ERRORS } from './production-runs.errors.js';
import { CreateProductionRunDto, ListProductionRunsQuery, UpdateProductionRunDto } from './dto/production-run.dto.js';
import { ProductionRunResponse } from './dto/production-run.response.js';
import { ProductionRunsService } from './production-runs.service.js';

/** The 422s of a write: any field, an unknown brand, and an end before the start. */
const INVALID_WRITE = [
  ERRORS.validationFailed,
  ERRORS.invalidField('brand_id', 'brand does not exist'),
  ERRORS.invalidField('end_date', 'must not be before start_date'),
];

/**
 * CRUD of runs: reads scoped to the caller's clients, admin writes. The analytics routes under
 * /production-runs/{id}/analytics live in the analytics module.
 */
export class ProductionRunsController extends crudController({
  path: 'production-runs',
  service: ProductionRunsService,
  scoped: true,
  dto: {
    list: ListProductionRunsQuery,
    create: CreateProductionRunDto,
    update: UpdateProductionRunDto,
    response: ProductionRunResponse,
  },
  routes: {
    list: { summary: 'List visible production runs, with tracker_count' },
    get: { summary: 'Get a production run', errors: [PRODUCTION_RUN_ERRORS.productionRunNotFound] },
    create: { summary: "Create a production run (admin); client_id is the brand's client", errors: INVALID_WRITE },
    update: {
      summary: 'Update a production run (admin; partial body allowed; null clears a date)',
      errors: [PRODUCTION_RUN_ERRORS.productionRunNotFound, ...INVALID_WRITE],
    },
    delete: {
      summary: 'Delete a production run (admin); answers the deleted run',
      errors: [PRODUCTION_RUN_ERRORS.productionRunNotFound, ERRORS.stillReferencedBy('Production run', 'trackers')],
    },
  },
}) {}
