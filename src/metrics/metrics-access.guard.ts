import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import type { Strategy } from 'passport';
import { authenticateBearer, BEARER_STRATEGY } from '../common/auth/auth.guard.js';
import { parseBearer } from '../common/auth/bearer.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';

/**
 * Who may scrape /metrics (the route is public to the global guard, which knows only user tokens):
 * - METRICS_TOKEN set: that token, and only it (`Authorization: Bearer <METRICS_TOKEN>`).
 * - otherwise in production: an admin's access token — the metrics describe the whole service and
 *   are never public there.
 * - otherwise (development, test): anyone.
 */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BEARER_STRATEGY) private readonly strategy: Strategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    if (this.config.metricsToken) {
      checkScrapeToken(request.headers.authorization, this.config.metricsToken);
      return true;
    }
    if (this.config.nodeEnv !== 'production') return true;
    const user = await authenticateBearer(this.strategy, request);
    if (!user.roles.includes('admin')) throw new DomainError(ERRORS.notEnoughPermissions);
    return true;
  }
}

function checkScrapeToken(header: string | undefined, expected: string): void {
  const credential = parseBearer(header);
  if (credential.kind === 'none') throw new DomainError(ERRORS.notAuthenticated);
  const given = Buffer.from(credential.kind === 'token' ? credential.token : '');
  const wanted = Buffer.from(expected);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
    throw new DomainError(ERRORS.invalidCredentials);
}
