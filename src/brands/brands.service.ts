import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { DomainError, found } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { BRAND_ERRORS } from './brands.errors.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { BrandsRepository } from './brands.repository.js';
import type { CreateBrandDto, ListBrandsQuery, UpdateBrandDto } from './dto/brand.dto.js';
import { toBrandResponse, type BrandResponse } from './dto/brand.response.js';

/** Brands: admin writes, reads scoped to the caller's clients. */
@Injectable()
export class BrandsService {
  constructor(
    private readonly db: Db,
    private readonly brands: BrandsRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async list(scope: AccessScope, query: ListBrandsQuery): Promise<Page<BrandResponse>> {
    const { rows, total } = await this.brands.list(scope, { clientId: query.client_id, name: query.name }, query);
    return toPage(rows.map(toBrandResponse), total, query);
  }

  async get(scope: AccessScope, id: number): Promise<BrandResponse> {
    return toBrandResponse(found(await this.brands.findById(scope, id), BRAND_ERRORS.brandNotFound));
  }

  async create(scope: AccessScope, body: CreateBrandDto): Promise<BrandResponse> {
    return this.db.transaction(async () => {
      if (!(await this.brands.clientExists(scope, body.client_id))) throw unknownClient();
      if (await this.brands.nameTaken(body.client_id, body.name, null)) throw duplicateName(body.name, body.client_id);
      return toBrandResponse(await this.brands.insert({ name: body.name, clientId: body.client_id }));
    });
  }

  /**
   * Moving a brand to another client moves its runs and trackers to another scope (the trigger
   * rewrites production_runs.client_id), so cached tracker lists and the runs' analytics are
   * invalidated — after the commit, so no instance can re-cache the old state.
   */
  async update(scope: AccessScope, id: number, body: UpdateBrandDto): Promise<BrandResponse> {
    const { row, movedRunIds } = await this.db.transaction(async () => {
      const current = found(await this.brands.findById(scope, id, true), BRAND_ERRORS.brandNotFound);
      const clientId = body.client_id ?? current.client_id;
      const name = body.name ?? current.name;
      const moved = clientId !== current.client_id;
      if (moved && !(await this.brands.clientExists(scope, clientId))) throw unknownClient();
      if ((moved || body.name !== undefined) && (await this.brands.nameTaken(clientId, name, id)))
        throw duplicateName(name, clientId);
      const runIds = moved ? await this.brands.runIds(scope, id) : [];
      const updated = await this.brands.update(scope, id, { name: body.name, clientId: body.client_id });
      return { row: updated!, movedRunIds: moved ? runIds : null };
    });
    if (movedRunIds) await this.invalidation.trackersChanged(movedRunIds);
    return toBrandResponse(row);
  }

  /** The row is locked first, so no run can start referencing it between the check and the delete. */
  async delete(scope: AccessScope, id: number): Promise<BrandResponse> {
    return this.db.transaction(async () => {
      found(await this.brands.findById(scope, id, true), BRAND_ERRORS.brandNotFound);
      if ((await this.brands.references(id)).productionRuns) {
        throw new DomainError(ERRORS.stillReferencedBy('Brand', 'production runs'));
      }
      return toBrandResponse((await this.brands.delete(scope, id))!);
    });
  }
}

function unknownClient(): RequestValidationException {
  return RequestValidationException.field('client_id', 'client does not exist');
}

function duplicateName(name: string, clientId: number): DomainError {
  return new DomainError(BRAND_ERRORS.brandExists(name, clientId));
}
