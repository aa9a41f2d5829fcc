import { jest } from '@jest/globals';
import { ConfigValidationError, loadConfig } from '../../src/common/config/app-config.js';
import { loadConfigOrExit } from '../../src/runtime.js';

const problemsOf = (env: Record<string, string | undefined>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  return [];
};

const STRONG_SECRET = 'x'.repeat(32);

describe('loadConfig', () => {
  it('applies the documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      nodeEnv: 'development',
      jwtSecret: undefined,
      jwtIssuer: 'tracker-pipeline',
      jwtAudience: 'tracker-pipeline-api',
      accessTokenExpireMinutes: 30,
      refreshTokenExpireDays: 7,
      imageMaxBytes: 10 * 1024 * 1024,
      importMaxBytes: 20 * 1024 * 1024,
      hourlyHistoryDays: 7,
      embeddedPgPort: 54329,
      adminEmail: 'admin@example.com',
      seedDemoData: true,
      trustProxy: false,
      redisUrl: undefined,
      databaseUrl: undefined,
    });
  });

  it('names each bad variable, all at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      ACCESS_TOKEN_EXPIRE_MINUTES: '0',
      REFRESH_TOKEN_EXPIRE_DAYS: '7.5',
      TRUST_PROXY: 'maybe',
      NODE_ENV: 'staging',
      DATABASE_URL: 'mysql://localhost/db',
      REDIS_URL: 'http://localhost:6379',
      LOG_LEVEL: 'loud',
      ADMIN_EMAIL: 'not-an-email',
      ADMIN_PASSWORD: 'short',
      CORS_ORIGINS: 'https://ok.example,ftp://bad.example',
    });
    const named = [
      'PORT',
      'ACCESS_TOKEN_EXPIRE_MINUTES',
      'REFRESH_TOKEN_EXPIRE_DAYS',
      'TRUST_PROXY',
      'NODE_ENV',
      'DATABASE_URL',
      'REDIS_URL',
      'LOG_LEVEL',
      'ADMIN_EMAIL',
      'ADMIN_PASSWORD',
      'CORS_ORIGINS',
    ];
    for (const name of named) expect(problems.some((p) => p.startsWith(name))).toBe(true);
    expect(problems).toHaveLength(named.length);
    expect(problems.find((p) => p.startsWith('PORT'))).toContain('"eighty"');
  });

  it('reads the MQTT settings: off by default, a client id of the group, host and port', () => {
    const off = loadConfig({ PORT: '3100' }).mqtt;
    expect(off).toMatchObject({
      url: undefined,
      topic: 'trackers/+/reports',
      group: 'tracker-pipeline',
      clientId: expect.stringMatching(/^tracker-pipeline-.+-3100$/),
      sessionExpirySeconds: 86_400,
      receiveMaximum: 1000,
      maxMessageBytes: 4 * 1024 * 1024,
    });
    const on = loadConfig({
      MQTT_URL: 'mqtts://svc:secret@broker:8883',
      MQTT_TOPIC: 'fleet/+/up',
      MQTT_GROUP: 'g1',
    }).mqtt;
    expect(on).toMatchObject({
      url: 'mqtts://svc:secret@broker:8883',
      topic: 'fleet/+/up',
      clientId: expect.stringMatching(/^g1-/),
    });
  });

  it.each([
    ['MQTT_URL', { MQTT_URL: 'http://broker' }],
    ['MQTT_TOPIC', { MQTT_TOPIC: 'trackers/reports' }],
    ['MQTT_TOPIC', { MQTT_TOPIC: 'trackers/+/+/reports' }],
    ['MQTT_TOPIC', { MQTT_TOPIC: 'trackers/+/#' }],
    ['MQTT_TOPIC', { MQTT_TOPIC: '$share/g/trackers/+/reports' }],
    ['MQTT_GROUP', { MQTT_GROUP: 'a/b' }],
    ['MQTT_RECONNECT_MAX_MS', { MQTT_RECONNECT_MIN_MS: '5000', MQTT_RECONNECT_MAX_MS: '1000' }],
  ])('refuses a bad %s', (name, env) => {
    expect(problemsOf(env).map((p) => p.split(' ')[0])).toEqual([name]);
  });

  it('reads the alert settings: defaults, overrides at their bounds, and the e-mailed kinds', () => {
    expect(loadConfig({}).alerts).toEqual({
      enabled: true,
      silentHours: 24,
      batteryPercent: 15,
      checkSeconds: 60,
      emailKinds: ['silent', 'overdue'],
    });
    expect(
      loadConfig({
        ALERTS_ENABLED: 'false',
        ALERT_SILENT_HOURS: '1',
        ALERT_BATTERY_PERCENT: '0',
        ALERT_CHECK_SECONDS: '1',
        EMAIL_NOTIFY_ALERTS: ' battery_low , silent ',
      }).alerts,
    ).toEqual({
      enabled: false,
      silentHours: 1,
      batteryPercent: 0,
      checkSeconds: 1,
      emailKinds: ['battery_low', 'silent'],
    });
    expect(
      loadConfig({ ALERT_SILENT_HOURS: '720', ALERT_BATTERY_PERCENT: '100', ALERT_CHECK_SECONDS: '86400' }).alerts,
    ).toMatchObject({ silentHours: 720, batteryPercent: 100, checkSeconds: 86_400 });
    expect(loadConfig({ EMAIL_NOTIFY_ALERTS: 'none' }).alerts.emailKinds).toEqual([]);
    expect(loadConfig({ EMAIL_NOTIFY_ALERTS: 'NONE' }).alerts.emailKinds).toEqual([]);
    expect(loadConfig({ EMAIL_NOTIFY_ALERTS: 'overdue' }).alerts.emailKinds).toEqual(['overdue']);
  });

  it.each([
    ['ALERT_SILENT_HOURS', '0'],
    ['ALERT_SILENT_HOURS', '721'],
    ['ALERT_SILENT_HOURS', '1.5'],
    ['ALERT_SILENT_HOURS', 'a day'],
    ['ALERT_BATTERY_PERCENT', '-1'],
    ['ALERT_BATTERY_PERCENT', '101'],
    ['ALERT_CHECK_SECONDS', '0'],
    ['ALERT_CHECK_SECONDS', '86401'],
    ['ALERT_CHECK_SECONDS', '30s'],
    ['EMAIL_NOTIFY_ALERTS', 'silent,late'],
    ['EMAIL_NOTIFY_ALERTS', 'SILENT'],
    ['ALERTS_ENABLED', 'sometimes'],
  ])('refuses %s=%s, naming it', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.map((p) => p.split(' ')[0])).toEqual([name]);
    expect(problems[0]).toContain(
      name === 'EMAIL_NOTIFY_ALERTS' ? 'must be one of silent, overdue, battery_low' : value,
    );
  });

  it('puts every problem into the error message', () => {
    expect(() => loadConfig({ PORT: '-1', HOURLY_HISTORY_DAYS: 'x' })).toThrow(
      /Invalid configuration:[\s\S]*PORT[\s\S]*HOURLY_HISTORY_DAYS/,
    );
  });

  it('refuses NODE_ENV=production without JWT_SECRET', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toEqual([
      'JWT_SECRET must be set to at least 32 characters when NODE_ENV=production',
    ]);
    expect(problemsOf({ NODE_ENV: 'production', JWT_SECRET: '   ' })).toHaveLength(1);
  });

  it('refuses NODE_ENV=production with a JWT_SECRET shorter than 32 characters', () => {
    expect(problemsOf({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(31) })).toEqual([
      'JWT_SECRET must be set to at least 32 characters when NODE_ENV=production',
    ]);
  });

  it('accepts NODE_ENV=production with a 32-character JWT_SECRET', () => {
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: STRONG_SECRET }).jwtSecret).toBe(STRONG_SECRET);
  });

  it('allows a missing or short JWT_SECRET outside production (one is generated and kept)', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).jwtSecret).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'test', JWT_SECRET: 'short' }).jwtSecret).toBe('short');
  });

  it('parses booleans, integers and lists', () => {
    const config = loadConfig({
      TRUST_PROXY: 'TRUE',
      SEED_DEMO_DATA: '0',
      REFRESH_TOKEN_EXPIRE_DAYS: '14',
      CORS_ORIGINS: 'https://a.example, http://b.example:8080',
      ADMIN_EMAIL: 'Boss@Example.com',
    });
    expect(config).toMatchObject({
      trustProxy: true,
      seedDemoData: false,
      refreshTokenExpireDays: 14,
      adminEmail: 'boss@example.com',
    });
    expect(config.corsOrigins).toEqual(['https://a.example', 'http://b.example:8080']);
  });
});

describe('loadConfigOrExit', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    jest.restoreAllMocks();
  });

  it('prints every bad variable and exits with status 1', () => {
    process.env = { ...saved, NODE_ENV: 'production', JWT_SECRET: 'too-short', PORT: 'abc' };
    const exit = jest.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(() => loadConfigOrExit()).toThrow('exit 1');
    expect(exit).toHaveBeenCalledWith(1);
    const output = printed.mock.calls.map((args) => String(args[0])).join('\n');
    expect(output).toContain('JWT_SECRET must be set to at least 32 characters');
    expect(output).toContain('PORT must be an integer');
    expect(output).not.toContain('too-short');
  });
});
