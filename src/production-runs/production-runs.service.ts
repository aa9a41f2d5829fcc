import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError, found } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PRODUCTION_RUN_ERRORS } from './production-runs.errors.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import type {
  CreateProductionRunDto,
  ListProductionRunsQuery,
  UpdateProductionRunDto,
} from './dto/production-run.dto.js';
import { toProductionRunResponse, type ProductionRunResponse } from './dto/production-run.response.js';
import { ProductionRunsRepository } from './production-runs.repository.js';

/**
 * Production runs: admin writes, reads scoped to the caller's clients.
 * A run's analytics show its description and dates, so every update/delete invalidates
 * `analytics:run:<id>`; moving a run to another brand can move it to another client's scope, so
 * that also invalidates the tracker lists. Invalidation happens after the commit, so no instance
 * can re-cache the old state in between.
 */
@Injectable()
export class ProductionRunsService {
  constructor(
    private readonly db: Db,
    private readonly runs: ProductionRunsRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async list(scope: AccessScope, query: ListProductionRunsQuery): Promise<Page<ProductionRunResponse>> {
    const { rows, total } = await this.runs.list(scope, { brandId: query.brand_id, clientId: query.client_id }, query);
    return toPage(rows.map(toProductionRunResponse), total, query);
  }

  async get(scope: AccessScope, id: number): Promise<ProductionRunResponse> {
    return toProductionRunResponse(
      found(await this.runs.findById(scope, id), PRODUCTION_RUN_ERRORS.productionRunNotFound),
    );
  }

  /** An unknown brand is a bad body (422 on brand_id), not a missing resource. */
  async create(scope: AccessScope, body: CreateProductionRunDto): Promise<ProductionRunResponse> {
    const startDate = body.start_date ?? null;
    const endDate = body.end_date ?? null;
    assertDatesOrdered(startDate, endDate);
    return this.db.transaction(async () => {
      if (!(await this.runs.brandExists(scope, body.brand_id))) throw unknownBrand();
      const row = await this.runs.insert({
        description: body.description ?? '',
        brandId: body.brand_id,
        startDate,
        endDate,
        alertSilentHours: body.alert_silent_hours ?? null,
      });
      return toProductionRunResponse(row);
    });
  }

  async update(scope: AccessScope, id: number, body: UpdateProductionRunDto): Promise<ProductionRunResponse> {
    const { row, moved } = await this.db.transaction(async () => {
      const current = found(await this.runs.lock(scope, id), PRODUCTION_RUN_ERRORS.productionRunNotFound);
      assertDatesOrdered(
        body.start_date === undefined ? current.start_date : body.start_date,
        body.end_date === undefined ? current.end_date : body.end_date,
      );
      const moved = body.brand_id !== undefined && body.brand_id !== current.brand_id;
      if (moved && !(await this.runs.brandExists(scope, body.brand_id!))) throw unknownBrand();
      await this.runs.update(scope, id, {
        description: body.description,
        brandId: body.brand_id,
        startDate: body.start_date,
        endDate: body.end_date,
        alertSilentHours: body.alert_silent_hours,
      });
      // Read back for the fresh tracker_count and the trigger-maintained client_id.
      return { row: (await this.runs.findById(scope, id))!, moved };
    });
    await (moved ? this.invalidation.trackersChanged([id]) : this.invalidation.runsChanged([id]));
    return toProductionRunResponse(row);
  }

  /** The row is locked first, so no tracker can start referencing it between the check and the delete. */
  async delete(scope: AccessScope, id: number): Promise<ProductionRunResponse> {
    const row = await this.db.transaction(async () => {
      found(await this.runs.lock(scope, id), PRODUCTION_RUN_ERRORS.productionRunNotFound);
      if ((await this.runs.references(id)).trackers) {
        throw new DomainError(ERRORS.stillReferencedBy('Production run', 'trackers'));
      }
      return (await this.runs.delete(scope, id))!;
    });
    await this.invalidation.runsChanged([id]);
    return toProductionRunResponse(row);
  }
}

function assertDatesOrdered(start: Date | null, end: Date | null): void {
  if (start && end && end.getTime() < start.getTime()) {
    throw RequestValidationException.field('end_date', 'must not be before start_date');
  }
}

function unknownBrand(): RequestValidationException {
  return RequestValidationException.field('brand_id', 'brand does not exist');
}
