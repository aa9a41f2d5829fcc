/**
 * Derived health statuses and their limits (docs/api.md, health). Pure functions so the
 * thresholds are unit-tested on their own, independent of what the checks find.
 */
type BasicStatus = 'healthy' | 'unhealthy';
type PipelineStatus = 'healthy' | 'degraded' | 'unhealthy' | 'error';
type SystemStatus = 'healthy' | 'degraded' | 'unhealthy' | 'critical';
type PoolStatus = 'healthy' | 'warning' | 'critical';

/** Percent of passed steps, two decimals (0 when there are no steps, which cannot pass anything). */
export function successRate(successful: number, total: number): number {
  if (total <= 0) return 0;
  return Math.round((successful / total) * 10_000) / 100;
}

/** ≥ 80 healthy, 60 to < 80 degraded, < 60 unhealthy. */
export function pipelineStatusFor(rate: number): Exclude<PipelineStatus, 'error'> {
  if (rate >= 80) return 'healthy';
  if (rate >= 60) return 'degraded';
  return 'unhealthy';
}

/**
 * Basic failing → critical (the infrastructure itself is down); otherwise the pipeline decides:
 * healthy → healthy, degraded → degraded, unhealthy or error → unhealthy.
 */
export function systemStatusFor(basic: BasicStatus, pipeline: PipelineStatus): SystemStatus {
  if (basic !== 'healthy') return 'critical';
  if (pipeline === 'healthy') return 'healthy';
  if (pipeline === 'degraded') return 'degraded';
  return 'unhealthy';
}

/**
 * critical when no connection is available (checked_in = 0), warning above 80 % utilization,
 * else healthy. Exactly 80 % is still healthy ("warning above 80%").
 */
export function poolStatusFor(checkedIn: number, utilizationPercent: number): PoolStatus {
  if (checkedIn <= 0) return 'critical';
  if (utilizationPercent > 80) return 'warning';
  return 'healthy';
}
