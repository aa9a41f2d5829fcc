/**
 * Typed configuration, parsed once from the environment.
 * `loadConfig` is pure so tests can build apps with their own settings; every bad
 * variable is reported by name and the process exits non-zero (see main.ts).
 */
import { alertConfig, type AlertConfig } from './alert-config.js';
import { mailConfig, type MailConfig } from './mail-config.js';
import { mqttConfig, type MqttConfig } from './mqtt-config.js';
import { sharingConfig, type SharingConfig } from './sharing-config.js';
import { webhookConfig, type WebhookConfig } from './webhook-config.js';

type NodeEnv = 'development' | 'test' | 'production';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface AppConfig {
  port: number;
  nodeEnv: NodeEnv;
  databaseUrl: string | undefined;
  /** Streaming replicas for reads that tolerate lag (DATABASE_READ_URL, comma-separated); empty: none. */
  databaseReadUrls: string[];
  /** A replica further behind the primary than this serves no reads until it catches up. */
  readReplicaMaxLagMs: number;
  /** How often each replica's lag is measured (one small query on the primary and on each replica). */
  readReplicaCheckIntervalMs: number;
  dataDir: string;
  embeddedPgPort: number;
  /** Where a root start puts embedded PostgreSQL when DATA_DIR is closed to its user; unset: the default. */
  embeddedPgRuntimeDir: string | undefined;
  redisUrl: string | undefined;
  jwtSecret: string | undefined;
  jwtIssuer: string;
  jwtAudience: string;
  accessTokenExpireMinutes: number;
  refreshTokenExpireDays: number;
  uploadDir: string;
  imageMaxBytes: number;
  importMaxBytes: number;
  cacheTtlSeconds: number;
  hourlyHistoryDays: number;
  dbPoolSize: number;
  dbConnectionTimeoutMs: number;
  dbStatementTimeoutMs: number;
  usingPgbouncer: boolean;
  corsOrigins: string[];
  logLevel: LogLevel;
  adminEmail: string;
  adminPassword: string | undefined;
  seedDemoData: boolean;
  trustProxy: boolean;
  /** Clients reach the service only over https: send HSTS and CSP upgrade-insecure-requests. */
  behindTls: boolean;
  /** How long a new connection may stay silent before its first request's headers are complete. */
  httpFirstByteTimeoutMs: number;
  rawRetentionDays: number;
  /** Visits and automatic status entries from location reports (GEOFENCE_ENABLED). */
  geofenceEnabled: boolean;
  /** Dwell before a visit counts as arrival, for locations whose dwell_minutes is null. */
  geofenceDwellMinutes: number;
  metricsToken: string | undefined;
  /** Prefix of every cache key, so several deployments (or test apps) can share one Redis. */
  cachePrefix: string;
  /** Longest analytics JSON result kept in the cache, in bytes (ANALYTICS_CACHE_MAX_MB); longer ones are streamed every time. */
  analyticsCacheMaxBytes: number;
  /** Upper bound of the in-process cache tier, in bytes (NEAR_CACHE_MAX_MB). */
  nearCacheMaxBytes: number;
  /** Longest an entry of the in-process tier is served, even if no invalidation reached it. */
  nearCacheTtlSeconds: number;
  /** In-app notifications (and their events) older than this are purged by the periodic job. */
  notificationRetentionDays: number;
  /** Direct PostgreSQL session for LISTEN when DATABASE_URL goes through a transaction pooler; unset: DATABASE_URL. */
  databaseListenUrl: string | undefined;
  /** Interval of the `: keepalive` comment on open notification streams. */
  notificationStreamKeepaliveSeconds: number;
  /** Concurrent notification streams one user may hold, counted across every instance. */
  notificationStreamsPerUser: number;
  /** Most notifications one stream replays after Last-Event-ID (the newest of them). */
  notificationStreamReplayMax: number;
  /** E-mail digests (off without smtpUrl); see src/mail/. */
  mail: MailConfig;
  /** Outgoing webhooks; see src/webhooks/. */
  webhooks: WebhookConfig;
  /** Device reports over MQTT (off without its url); see src/devices/. */
  mqtt: MqttConfig;
  /** Share links' public routes and page; see src/share-links/. */
  sharing: SharingConfig;
  /** Silent, overdue and low-battery alerts; see src/alerts/. */
  alerts: AlertConfig;
}

export type { AlertConfig } from './alert-config.js';
export type { MailConfig } from './mail-config.js';
export type { MqttConfig } from './mqtt-config.js';
export type { SharingConfig } from './sharing-config.js';
export type { WebhookConfig } from './webhook-config.js';

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optional(name: string): string | undefined {
    return this.raw(name);
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be a number between ${min} and ${max} (got "${value}")`);
      return fallback;
    }
    return Number(value);
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, protocols: string[]): string | undefined {
    return this.urlValue(name, this.raw(name), protocols);
  }

  /** A comma-separated list of URLs (empty entries ignored). */
  urls(name: string, protocols: string[]): string[] {
    const entries = (this.raw(name) ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    return entries
      .map((entry) => this.urlValue(name, entry, protocols))
      .filter((url): url is string => url !== undefined);
  }

  private urlValue(name: string, value: string | undefined, protocols: string[]): string | undefined {
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value;
    } catch {
      this.problems.push(`${name} must be a ${protocols.join(' or ')}// URL`);
      return undefined;
    }
  }
}

const MB = 1024 * 1024;

export function loadConfig(env: Env): AppConfig {
  const r = new Reader(env);
  const nodeEnv = r.oneOf<NodeEnv>('NODE_ENV', ['development', 'test', 'production'], 'development');
  const jwtSecret = r.optional('JWT_SECRET');
  if (nodeEnv === 'production' && (jwtSecret === undefined || jwtSecret.length < 32))
    r.problems.push('JWT_SECRET must be set to at least 32 characters when NODE_ENV=production');
  const adminEmail = r.string('ADMIN_EMAIL', 'admin@example.com');
  if (!/^[^@\s]+@[^@\s]+$/.test(adminEmail)) r.problems.push('ADMIN_EMAIL must be an e-mail address');
  const adminPassword = r.optional('ADMIN_PASSWORD');
  if (adminPassword !== undefined && adminPassword.length < 8)
    r.problems.push('ADMIN_PASSWORD must be at least 8 characters');
  const corsOrigins = (r.optional('CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      r.problems.push(`CORS_ORIGINS entry "${origin}" must look like https://host[:port]`);
    }
  }

  const port = r.int('PORT', 3000, 0, 65535);
  const config: AppConfig = {
    port,
    nodeEnv,
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseReadUrls: r.urls('DATABASE_READ_URL', ['postgres:', 'postgresql:']),
    readReplicaMaxLagMs: r.int('READ_REPLICA_MAX_LAG_MS', 2000, 0, 3_600_000),
    readReplicaCheckIntervalMs: r.int('READ_REPLICA_CHECK_INTERVAL_MS', 500, 50, 60_000),
    dataDir: r.string('DATA_DIR', './data'),
    embeddedPgPort: r.int('EMBEDDED_PG_PORT', 54329, 1024, 65535),
    embeddedPgRuntimeDir: r.optional('EMBEDDED_PG_RUNTIME_DIR'),
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:']),
    jwtSecret,
    jwtIssuer: r.string('JWT_ISSUER', 'tracker-pipeline'),
    jwtAudience: r.string('JWT_AUDIENCE', 'tracker-pipeline-api'),
    accessTokenExpireMinutes: r.int('ACCESS_TOKEN_EXPIRE_MINUTES', 30, 1, 24 * 60),
    refreshTokenExpireDays: r.int('REFRESH_TOKEN_EXPIRE_DAYS', 7, 1, 365),
    uploadDir: r.string('UPLOAD_DIR', ''),
    imageMaxBytes: r.int('IMAGE_MAX_BYTES', 10 * MB, 1, 1024 * MB),
    importMaxBytes: r.int('IMPORT_MAX_BYTES', 20 * MB, 1, 1024 * MB),
    cacheTtlSeconds: r.int('CACHE_TTL_SECONDS', 60, 1, 86400),
    hourlyHistoryDays: r.int('HOURLY_HISTORY_DAYS', 7, 0, 3650),
    dbPoolSize: r.int('DB_POOL_SIZE', 10, 1, 500),
    dbConnectionTimeoutMs: r.int('DB_CONNECTION_TIMEOUT_MS', 3000, 100, 60000),
    dbStatementTimeoutMs: r.int('DB_STATEMENT_TIMEOUT_MS', 30000, 100, 3600000),
    usingPgbouncer: r.bool('USING_PGBOUNCER', false),
    corsOrigins,
    logLevel: r.oneOf<LogLevel>('LOG_LEVEL', LOG_LEVELS, nodeEnv === 'test' ? 'silent' : 'info'),
    adminEmail: adminEmail.toLowerCase(),
    adminPassword,
    seedDemoData: r.bool('SEED_DEMO_DATA', true),
    trustProxy: r.bool('TRUST_PROXY', false),
    behindTls: r.bool('BEHIND_TLS', false),
    httpFirstByteTimeoutMs: r.int('HTTP_FIRST_BYTE_TIMEOUT_MS', 30000, 100, 600000),
    rawRetentionDays: r.int('RAW_RETENTION_DAYS', 0, 0, 36500),
    geofenceEnabled: r.bool('GEOFENCE_ENABLED', true),
    geofenceDwellMinutes: r.int('GEOFENCE_DWELL_MINUTES', 60, 0, 10080),
    metricsToken: r.optional('METRICS_TOKEN'),
    cachePrefix: r.string('CACHE_PREFIX', 'tps'),
    analyticsCacheMaxBytes: r.int('ANALYTICS_CACHE_MAX_MB', 16, 0, 256) * MB,
    nearCacheMaxBytes: r.int('NEAR_CACHE_MAX_MB', 64, 0, 16384) * MB,
    nearCacheTtlSeconds: r.int('NEAR_CACHE_TTL_SECONDS', 10, 1, 3600),
    notificationRetentionDays: r.int('NOTIFICATION_RETENTION_DAYS', 90, 1, 36500),
    databaseListenUrl: r.url('DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']),
    notificationStreamKeepaliveSeconds: r.int('NOTIFICATION_STREAM_KEEPALIVE_SECONDS', 15, 1, 3600),
    notificationStreamsPerUser: r.int('NOTIFICATION_STREAMS_PER_USER', 5, 1, 1000),
    notificationStreamReplayMax: r.int('NOTIFICATION_STREAM_REPLAY_MAX', 500, 1, 100_000),
    mail: mailConfig(r),
    webhooks: webhookConfig(r, nodeEnv),
    mqtt: mqttConfig(r, port),
    sharing: sharingConfig(r),
    alerts: alertConfig(r),
  };
  if (config.uploadDir === '') config.uploadDir = `${config.dataDir}/uploads`;
  if (r.problems.length > 0) throw new ConfigValidationError(r.problems);
  return config;
}
