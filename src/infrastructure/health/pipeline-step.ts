import { DiscoveryService } from '@nestjs/core';
import { raw, type Db } from '../database/db.js';
import type { AccessScope } from '../../common/auth/access-scope.js';

/** What one pipeline health step found: passing when it lists no issue. */
export interface StepOutcome {
  success: boolean;
  details: Record<string, unknown>;
  issues: string[];
}

/** One step's check, run with the (admin) scope of the health request. */
export type PipelineStepCheck = (scope: AccessScope) => Promise<StepOutcome>;

/**
 * A feature's answer to the pipeline health steps about its own tables: a provider of the
 * feature's module, marked with @PipelineStepProvider(), that maps step keys (e.g.
 * 'check_notification_delivery') to their checks. The health module finds every marked provider
 * (Nest's DiscoveryService) and runs its steps in the order and with the texts it defines itself,
 * so the health module knows no feature's tables.
 */
export interface PipelineStepSource {
  readonly pipelineSteps: Readonly<Record<string, PipelineStepCheck>>;
}

/** Marks a provider implementing PipelineStepSource for the health module's discovery. */
export const PipelineStepProvider = DiscoveryService.createDecorator<void>();

/** An outcome that passes exactly when `issues` is empty. */
export function stepOutcome(details: Record<string, unknown>, issues: string[] = []): StepOutcome {
  return { success: issues.length === 0, details, issues };
}

/** Longest any single step query may run; a slow step fails instead of holding a connection. */
const STEP_STATEMENT_TIMEOUT_MS = 5000;

/**
 * Runs one step in its own read-only transaction with a statement timeout, so one slow step cannot
 * hang the check. Health reads the whole system: only an admin scope is accepted (the routes are
 * admin-only; asking with a narrower scope is a programming error, not a filter).
 */
export function readOnlyStep<T>(db: Db, scope: AccessScope, work: () => Promise<T>): Promise<T> {
  if (!scope.all) throw new Error('pipeline health checks read the whole system and need an admin scope');
  return db.replica.transaction(async () => {
    // One round trip (simple protocol allows several statements): this runs on every step.
    await db.execute(raw(`SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = ${STEP_STATEMENT_TIMEOUT_MS}`));
    return work();
  });
}
