import { pipelineStatusFor, poolStatusFor, successRate, systemStatusFor } from '../../src/health/health-status.js';

describe('pipeline success rate and status thresholds', () => {
  it.each([
    [7, 7, 100],
    [6, 7, 85.71],
    [5, 7, 71.43],
    [4, 7, 57.14],
    [0, 7, 0],
    [4, 5, 80],
    [3, 5, 60],
    [0, 0, 0],
  ])('%i of %i steps → %d %%', (ok, total, rate) => {
    expect(successRate(ok, total)).toBe(rate);
  });

  it.each([
    [100, 'healthy'],
    [80, 'healthy'],
    [79.99, 'degraded'],
    [71.43, 'degraded'],
    [60, 'degraded'],
    [59.99, 'unhealthy'],
    [0, 'unhealthy'],
  ])('%d %% → %s', (rate, status) => {
    expect(pipelineStatusFor(rate)).toBe(status);
  });
});

describe('system status (derived status table)', () => {
  it.each([
    ['healthy', 'healthy', 'healthy'],
    ['healthy', 'degraded', 'degraded'],
    ['healthy', 'unhealthy', 'unhealthy'],
    ['healthy', 'error', 'unhealthy'],
    ['unhealthy', 'healthy', 'critical'],
    ['unhealthy', 'degraded', 'critical'],
    ['unhealthy', 'unhealthy', 'critical'],
    ['unhealthy', 'error', 'critical'],
  ] as const)('basic %s + pipeline %s → %s', (basic, pipeline, system) => {
    expect(systemStatusFor(basic, pipeline)).toBe(system);
  });
});

describe('pool status', () => {
  it.each([
    [10, 0, 'healthy'],
    [2, 80, 'healthy'],
    [1, 90, 'warning'],
    [0, 100, 'critical'],
    [0, 0, 'critical'],
  ])('checked_in %i, utilization %d %% → %s', (checkedIn, utilization, status) => {
    expect(poolStatusFor(checkedIn, utilization)).toBe(status);
  });
});
