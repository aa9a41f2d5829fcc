import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DB_POOL_ENVIRONMENTS } from './db-pool.controller.js';

/**
 * Outside development/test the pool endpoint does not exist: it answers 404 like an unknown
 * route, before authentication (so it is not discoverable with a 401).
 */
@Injectable()
export class DbPoolAvailability implements NestMiddleware {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  use(_req: Request, _res: Response, next: NextFunction): void {
    if (!DB_POOL_ENVIRONMENTS.includes(this.config.nodeEnv)) throw new DomainError(ERRORS.notFound);
    next();
  }
}
