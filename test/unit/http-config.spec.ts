import { ConfigValidationError, loadConfig } from '../../src/common/config/app-config.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  return [];
};

describe('loadConfig: HTTP settings', () => {
  it('defaults: not behind TLS, 30 s for a new connection to send its first request', () => {
    expect(loadConfig({})).toMatchObject({ behindTls: false, httpFirstByteTimeoutMs: 30_000 });
  });

  it('reads BEHIND_TLS and HTTP_FIRST_BYTE_TIMEOUT_MS', () => {
    expect(loadConfig({ BEHIND_TLS: 'true', HTTP_FIRST_BYTE_TIMEOUT_MS: '5000' })).toMatchObject({
      behindTls: true,
      httpFirstByteTimeoutMs: 5000,
    });
  });

  it('names a bad value', () => {
    expect(problemsOf({ BEHIND_TLS: 'maybe' })).toEqual(['BEHIND_TLS must be true or false (got "maybe")']);
    expect(problemsOf({ HTTP_FIRST_BYTE_TIMEOUT_MS: '0' })).toEqual([
      'HTTP_FIRST_BYTE_TIMEOUT_MS must be an integer between 100 and 600000 (got "0")',
    ]);
    expect(problemsOf({ HTTP_FIRST_BYTE_TIMEOUT_MS: '30s' })).toHaveLength(1);
  });
});
