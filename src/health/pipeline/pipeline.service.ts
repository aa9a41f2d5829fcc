import { Injectable, Logger } from '@nestjs/common';
import type { AccessScope } from '../../common/auth/access-scope.js';
import { isoWithOffset } from '../../common/http/timestamps.js';
import type { PipelineHealthResponse, PipelineStepResponse, RecommendationResponse } from '../dto/health.response.js';
import { pipelineStatusFor, successRate } from '../health-status.js';
import {
  elapsed,
  PipelineSteps,
  STEP_DEFINITIONS,
  type StepDefinition,
  type StepKey,
  type StepOutcome,
} from './pipeline-steps.js';

const OPERATIONS_DOC = 'docs/operations.md';

/**
 * Runs the pipeline steps and turns their outcomes into the pipeline health result: success rate,
 * status by threshold, one recommendation per failed step (or one `info` when all pass).
 * A step that throws is a failed step (its cause goes into `issues`); only a failure outside the
 * steps is a failure of the health machinery, which callers map to `error` / 500.
 */
@Injectable()
export class PipelineHealthService {
  private readonly logger = new Logger(PipelineHealthService.name);

  constructor(private readonly steps: PipelineSteps) {}

  async check(scope: AccessScope): Promise<PipelineHealthResponse> {
    const started = performance.now();
    // Steps off the database (the cache) run alongside the SQL steps; the SQL steps run one after
    // another on one pooled connection at a time, so health never crowds out real traffic.
    const offDatabase = STEP_DEFINITIONS.filter((s) => !s.needsDatabase).map(
      (s) => [s.key, this.runStep(s, scope)] as const,
    );
    const outcomes = new Map<StepKey, StepOutcome>();
    for (const step of STEP_DEFINITIONS.filter((s) => s.needsDatabase)) {
      const connection = outcomes.get('check_database_connection');
      // Without a connection every SQL step would wait for its own connection timeout: fail them at once.
      outcomes.set(
        step.key,
        connection && !connection.success ? skippedForDatabase(step) : await this.runStep(step, scope),
      );
    }
    for (const [key, pending] of offDatabase) outcomes.set(key, await pending);

    const testSteps: Record<string, PipelineStepResponse> = {};
    for (const step of STEP_DEFINITIONS) {
      const outcome = outcomes.get(step.key) as StepOutcome;
      testSteps[step.key] = {
        name: step.name,
        success: outcome.success,
        details: outcome.details,
        issues: outcome.issues,
      };
    }
    const successful = STEP_DEFINITIONS.filter((s) => testSteps[s.key].success).length;
    const rate = successRate(successful, STEP_DEFINITIONS.length);
    return {
      status: pipelineStatusFor(rate),
      timestamp: isoWithOffset(),
      success_rate: rate,
      successful_steps: successful,
      total_steps: STEP_DEFINITIONS.length,
      test_steps: testSteps,
      recommendations: recommendationsFor(testSteps),
      response_time_ms: elapsed(started),
    };
  }

  /** Runs one step; its own duration goes into `details.duration_ms` (which step is slow). */
  private async runStep(step: StepDefinition, scope: AccessScope): Promise<StepOutcome> {
    const started = performance.now();
    try {
      const outcome = await this.steps.run(step.key, scope);
      return { ...outcome, details: { ...outcome.details, duration_ms: elapsed(started) } };
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      this.logger.warn(`pipeline step ${step.key} could not run: ${message}`);
      return {
        success: false,
        details: { error: message, duration_ms: elapsed(started) },
        issues: [`${step.name} check could not run: ${message}`],
      };
    }
  }
}

function skippedForDatabase(step: StepDefinition): StepOutcome {
  return {
    success: false,
    details: { skipped: true },
    issues: [`${step.name} check skipped: the database connection check failed`],
  };
}

/** One recommendation per failed step, in step order; exactly one `info` when everything passed. */
export function recommendationsFor(testSteps: Record<string, PipelineStepResponse>): RecommendationResponse[] {
  const failed = STEP_DEFINITIONS.filter((step) => testSteps[step.key] && !testSteps[step.key].success);
  if (failed.length === 0) {
    return [
      {
        severity: 'info',
        issue: 'All pipeline checks passed',
        action: 'No action needed; keep polling /api/v1/health/basic and run the pipeline check periodically.',
        documentation: `${OPERATIONS_DOC}#pipeline-health`,
      },
    ];
  }
  return failed.map((step) => ({
    severity: step.severity,
    issue: `${step.name} check failed: ${testSteps[step.key].issues[0] ?? 'no detail'}`,
    action: step.action,
    documentation: `${OPERATIONS_DOC}#${step.key}`,
  }));
}

/** The pipeline result when the machinery itself failed (embedded in the system result). */
export function pipelineErrorResult(cause: string, responseTimeMs: number): PipelineHealthResponse {
  return {
    status: 'error',
    timestamp: isoWithOffset(),
    success_rate: 0,
    successful_steps: 0,
    total_steps: STEP_DEFINITIONS.length,
    test_steps: {},
    recommendations: [
      {
        severity: 'critical',
        issue: `Health check failed: ${cause}`,
        action: 'Check the service logs for the failure of the health check itself.',
        documentation: `${OPERATIONS_DOC}#pipeline-health`,
      },
    ],
    response_time_ms: responseTimeMs,
  };
}
