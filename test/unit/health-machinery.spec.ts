import { Logger, ServiceUnavailableException } from '@nestjs/common';
import { DomainError } from '../../src/common/errors/domain-error.js';
import type { HealthCheckService } from '@nestjs/terminus';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import type { AppConfig } from '../../src/common/config/app-config.js';
import type { DatabasePool } from '../../src/infrastructure/database/database-pool.js';
import { HealthService } from '../../src/health/health.service.js';
import type { CacheStoreHealthIndicator } from '../../src/health/indicators/cache-store.health.js';
import type { DatabaseHealthIndicator } from '../../src/health/indicators/database.health.js';
import type { PipelineStepResponse } from '../../src/health/dto/health.response.js';
import type { DiscoveryService } from '@nestjs/core';
import { PipelineStepProvider } from '../../src/infrastructure/health/pipeline-step.js';
import type { CacheService } from '../../src/infrastructure/cache/cache.service.js';
import type { PipelineChecksRepository } from '../../src/health/pipeline/pipeline-checks.repository.js';
import {
  PipelineSteps,
  STEP_DEFINITIONS,
  type StepKey,
  type StepOutcome,
} from '../../src/health/pipeline/pipeline-steps.js';
import { PipelineHealthService, recommendationsFor } from '../../src/health/pipeline/pipeline.service.js';

// The failures below are expected; keep their error logs out of the test output.
beforeAll(() => Logger.overrideLogger(false));

const admin = AccessScope.admin(1);
const passing: StepOutcome = { success: true, details: {}, issues: [] };

function stepsDoing(behaviour: Partial<Record<StepKey, () => Promise<StepOutcome>>>): PipelineSteps {
  return {
    run: (key: StepKey) => (behaviour[key] ? behaviour[key]() : Promise.resolve(passing)),
  } as unknown as PipelineSteps;
}

function healthService(terminusCheck: () => Promise<unknown>, pipeline: PipelineHealthService): HealthService {
  const terminus = { check: terminusCheck } as unknown as HealthCheckService;
  const pool = { stats: () => ({ size: 4, total: 3, idle: 1, checkedOut: 2, waiting: 0 }) } as unknown as DatabasePool;
  const config = { usingPgbouncer: false, nodeEnv: 'test' } as AppConfig;
  return new HealthService(
    terminus,
    {} as DatabaseHealthIndicator,
    {} as CacheStoreHealthIndicator,
    pipeline,
    pool,
    config,
  );
}

const upResult = { status: 'ok', details: { database: { status: 'up' }, cache_store: { status: 'up' } } };

describe('pipeline machinery', () => {
  it('turns a step that throws into a failed step with its cause, not a failed check', async () => {
    const service = new PipelineHealthService(
      stepsDoing({ check_status_consistency: () => Promise.reject(new Error('relation "trackers" does not exist')) }),
    );
    const result = await service.check(admin);
    expect(result.test_steps.check_status_consistency).toMatchObject({
      success: false,
      details: { error: 'relation "trackers" does not exist', duration_ms: expect.any(Number) },
    });
    expect(result.test_steps.check_status_consistency.issues[0]).toMatch(
      /could not run: relation "trackers" does not exist/,
    );
    expect(result).toMatchObject({ status: 'healthy', success_rate: 90.91, successful_steps: 10, total_steps: 11 });
    expect(result.recommendations).toEqual([
      expect.objectContaining({ severity: 'warning', documentation: 'docs/operations.md#check_status_consistency' }),
    ]);
  });

  it('skips the SQL steps when the database connection fails, but still checks the cache and the MQTT subscription', async () => {
    let sqlSteps = 0;
    const steps = {
      run: (key: StepKey) => {
        if (key === 'check_database_connection')
          return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
        if (key !== 'check_cache_store' && key !== 'check_mqtt_ingest') sqlSteps += 1;
        return Promise.resolve(passing);
      },
    } as unknown as PipelineSteps;
    const result = await new PipelineHealthService(steps).check(admin);
    expect(sqlSteps).toBe(0);
    expect(result).toMatchObject({ status: 'unhealthy', success_rate: 18.18, successful_steps: 2 });
    expect(result.test_steps.check_cache_store.success).toBe(true);
    expect(result.test_steps.check_mqtt_ingest.success).toBe(true);
    expect(result.test_steps.check_required_tables).toMatchObject({ success: false, details: { skipped: true } });
    expect(result.recommendations).toHaveLength(9);
  });

  it('recommends exactly one info when every step passed, else one per failed step in step order', () => {
    const all: Record<string, PipelineStepResponse> = Object.fromEntries(
      STEP_DEFINITIONS.map((step) => [step.key, { name: step.name, success: true, details: {}, issues: [] }]),
    );
    expect(recommendationsFor(all)).toEqual([expect.objectContaining({ severity: 'info' })]);
    all.check_cache_store = { ...all.check_cache_store, success: false, issues: ['down'] };
    all.check_required_tables = { ...all.check_required_tables, success: false, issues: ['missing'] };
    expect(recommendationsFor(all).map((r) => [r.severity, r.documentation])).toEqual([
      ['critical', 'docs/operations.md#check_required_tables'],
      ['warning', 'docs/operations.md#check_cache_store'],
    ]);
  });
});

describe('pipeline steps answered by the features', () => {
  /** PipelineSteps over discovered providers (each an instance with `pipelineSteps`). */
  function stepsFrom(...instances: object[]): PipelineSteps {
    const discovery = {
      getProviders: (options: { metadataKey: string }) =>
        options.metadataKey === PipelineStepProvider.KEY ? instances.map((instance) => ({ instance })) : [],
    } as unknown as DiscoveryService;
    const steps = new PipelineSteps({} as PipelineChecksRepository, {} as CacheService, discovery);
    steps.onModuleInit();
    return steps;
  }

  it('runs the check a discovered provider registered for the step', async () => {
    const outcome = { success: true, details: { from: 'trackers' }, issues: [] };
    const steps = stepsFrom({ pipelineSteps: { check_status_consistency: () => Promise.resolve(outcome) } });
    await expect(steps.run('check_status_consistency', admin)).resolves.toBe(outcome);
  });

  it('fails a step no provider answers, naming it', async () => {
    await expect(stepsFrom().run('check_notification_delivery', admin)).rejects.toThrow(
      'no module answers check_notification_delivery',
    );
  });
});

describe('health machinery failures', () => {
  const pipeline = new PipelineHealthService(stepsDoing({}));

  it('reports a down indicator inside a 200 result (terminus 503 is a result, not a failure)', async () => {
    const down = {
      status: 'error',
      details: { database: { status: 'up' }, cache_store: { status: 'down', message: 'timeout of 2000ms exceeded' } },
    };
    const service = healthService(() => Promise.reject(new ServiceUnavailableException(down)), pipeline);
    const basic = await service.basic();
    expect(basic.status).toBe('unhealthy');
    expect(basic.components.cache_store).toEqual({ status: 'unhealthy', error: 'timeout of 2000ms exceeded' });
  });

  it('answers 500 "Health check failed: <cause>" when the basic check cannot run', async () => {
    const service = healthService(() => Promise.reject(new Error('indicator exploded')), pipeline);
    for (const call of [() => service.basic(), () => service.status(), () => service.system(admin)]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).getStatus()).toBe(500);
      expect((error as DomainError).getResponse()).toEqual({ detail: 'Health check failed: indicator exploded' });
    }
  });

  it('answers 500 from /pipeline, and reports pipeline error (system unhealthy) from /system, when the pipeline cannot run', async () => {
    const broken = {
      check: () => Promise.reject(new Error('step catalogue unavailable')),
    } as unknown as PipelineHealthService;
    const service = healthService(() => Promise.resolve(upResult), broken);
    const error = await service.pipeline(admin).catch((e: unknown) => e);
    expect((error as DomainError).getStatus()).toBe(500);
    expect((error as DomainError).getResponse()).toEqual({ detail: 'Health check failed: step catalogue unavailable' });
    const system = await service.system(admin);
    expect(system.status).toBe('unhealthy');
    expect(system.pipeline).toMatchObject({ status: 'error', success_rate: 0, successful_steps: 0, total_steps: 11 });
    expect(system.pipeline.recommendations[0]).toMatchObject({
      severity: 'critical',
      issue: 'Health check failed: step catalogue unavailable',
    });
  });

  it('computes pool numbers by the documented definitions', () => {
    const service = healthService(() => Promise.resolve(upResult), pipeline);
    expect(service.dbPool()).toEqual({
      status: 'healthy',
      pool_stats: { size: 4, checked_in: 2, checked_out: 2, overflow: 0, total: 3, utilization_percent: 50 },
      configuration: { using_pgbouncer: false, environment: 'test' },
    });
  });
});
