import type { HealthIndicatorService } from '@nestjs/terminus';

/** Each component check gives up after this long, so a dead dependency answers `unhealthy` fast. */
export const COMPONENT_TIMEOUT_MS = 2000;

/**
 * The Terminus check of one component: `probe` resolves with the details of a working component
 * and throws (or outlasts COMPONENT_TIMEOUT_MS) for a failing one.
 */
export function componentCheck(
  health: HealthIndicatorService,
  key: string,
  probe: () => Promise<Record<string, unknown>>,
) {
  return health.check(key).attempt(probe).withTimeout(COMPONENT_TIMEOUT_MS);
}
