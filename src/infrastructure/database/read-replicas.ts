import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../common/config/app-config.js';
import { APP_CONFIG } from '../../common/config/config.module.js';
import { dataSourceOptions } from './data-source-options.js';
import { pgPool } from './database-pool.js';
import { ProbeConnection } from './probe-connection.js';
import { isDatabaseUnavailable, isSerializationConflict } from './sql-state.js';
import { parseLsn, PrimaryWalSamples } from './replica-lag.js';

/**
 * - starting: not measured yet; down: unreachable; not_replica: answers but is not in recovery
 *   (a promoted or misconfigured server, whose data may differ from the primary's);
 * - lagging: behind by more than READ_REPLICA_MAX_LAG_MS, or by an unknown amount;
 * - available: serves lag-tolerant reads.
 */
type ReplicaStatus = 'starting' | 'available' | 'lagging' | 'down' | 'not_replica';

interface ReplicaState {
  name: string;
  /** host:port/database, never the credentials. */
  address: string;
  status: ReplicaStatus;
  lagMs: number | null;
  checkedAt: Date | null;
  error: string | null;
  /** Lag-tolerant reads it served since start. */
  reads: number;
}

/** Primary WAL samples kept: a replica further behind than this has an unknown (and far too large) lag. */
const SAMPLE_HORIZON_MS = 60_000;

/** Longest a lag measurement may take (connect or query) before the replica counts as down. */
function probeTimeoutMs(config: AppConfig): number {
  return Math.min(2000, Math.max(500, config.readReplicaCheckIntervalMs * 2));
}

/**
 * How old, at most, the data of a read a replica served can be: the lag allowed at the last
 * measurement plus the time until the next one (an interval and a measurement's own duration).
 * A measurement older than that interval and duration no longer routes reads.
 */
export function replicaStalenessBoundMs(config: AppConfig): number {
  return config.readReplicaMaxLagMs + config.readReplicaCheckIntervalMs + probeTimeoutMs(config);
}

class Replica {
  status: ReplicaStatus = 'starting';
  lagMs: number | null = null;
  checkedAt: Date | null = null;
  /** When the last good measurement was taken (ms). */
  measuredAt = 0;
  error: string | null = null;
  reads = 0;
  /** The replica's TypeORM pool, opened after its first good measurement. */
  dataSource: DataSource | null = null;
  readonly clients = new Set<pg.Client>();

  constructor(
    readonly name: string,
    readonly url: string,
    readonly probe: ProbeConnection,
  ) {}

  get address(): string {
    const url = new URL(this.url);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  }
}

/**
 * The read replicas (DATABASE_READ_URL) and where a lag-tolerant read goes. Lag is measured in the
 * background (every READ_REPLICA_CHECK_INTERVAL_MS: the primary's WAL position, then each replica's
 * replay position, on probe connections of their own), so routing a read costs no round trip: it
 * reads the last measurement. A read goes to an `available` replica (round robin) or, when none is,
 * to the primary; a replica read that fails because the replica went away or cancelled it for a
 * replay conflict is answered by the primary instead, so callers never see a replica's failure.
 */
@Injectable()
export class ReadReplicas implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  private readonly primary: ProbeConnection;
  private readonly samples = new PrimaryWalSamples(SAMPLE_HORIZON_MS);
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Lag-tolerant reads by the server that answered, and replica reads retried on the primary. */
  readonly reads = { replica: 0, primary: 0, failovers: 0 };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const timeoutMs = probeTimeoutMs(config);
    this.primary = new ProbeConnection(config.databaseUrl ?? '', 'tracker-pipeline-replica-lag', timeoutMs);
    this.replicas = config.databaseReadUrls.map(
      (url, i) =>
        new Replica(`replica-${i + 1}`, url, new ProbeConnection(url, 'tracker-pipeline-replica-lag', timeoutMs)),
    );
  }

  get configured(): boolean {
    return this.replicas.length > 0;
  }

  get maxLagMs(): number {
    return this.config.readReplicaMaxLagMs;
  }

  /** True while no replica is available, so lag-tolerant reads go to the primary. */
  get fallback(): boolean {
    return this.configured && !this.replicas.some((r) => r.status === 'available');
  }

  states(): ReplicaState[] {
    return this.replicas.map((r) => ({
      name: r.name,
      address: r.address,
      status: r.status,
      lagMs: r.lagMs,
      checkedAt: r.checkedAt,
      error: r.error,
      reads: r.reads,
    }));
  }

  /**
   * Runs a lag-tolerant read: `onReplica` with an available replica's DataSource, else (none
   * available, or the replica failed it) `onPrimary`. `onReplica` must only read: it may run twice.
   */
  async route<T>(onReplica: (replica: DataSource) => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
    const replica = this.pick();
    if (replica?.dataSource) {
      try {
        const result = await onReplica(replica.dataSource);
        replica.reads += 1;
        this.reads.replica += 1;
        return result;
      } catch (error) {
        if (!this.replicaFailed(replica, error)) throw error;
      }
    }
    const result = await onPrimary();
    this.reads.primary += 1;
    return result;
  }

  onApplicationBootstrap(): void {
    if (!this.configured) return;
    void this.checkSafely().finally(() => this.schedule());
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.primary.close();
    for (const replica of this.replicas) {
      replica.probe.close();
      const dataSource = replica.dataSource;
      replica.dataSource = null;
      if (dataSource?.isInitialized) await dataSource.destroy().catch(() => undefined);
    }
  }

  private pick(): Replica | null {
    const measuredSince = Date.now() - this.config.readReplicaCheckIntervalMs - probeTimeoutMs(this.config);
    for (let i = 0; i < this.replicas.length; i += 1) {
      const replica = this.replicas[(this.next + i) % this.replicas.length];
      if (replica.status === 'available' && replica.dataSource && replica.measuredAt >= measuredSince) {
        this.next = (this.next + i + 1) % this.replicas.length;
        return replica;
      }
    }
    return null;
  }

  /** Whether the primary should answer instead; a replica that went away is marked down at once. */
  private replicaFailed(replica: Replica, error: unknown): boolean {
    // A standby cancels a statement that conflicts with replay (40001/40P01): the primary can answer it.
    const conflict = isSerializationConflict(error);
    if (!conflict && !isDatabaseUnavailable(error)) return false;
    this.reads.failovers += 1;
    if (!conflict) this.markDown(replica, error);
    return true;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => void this.checkSafely().finally(() => this.schedule()),
      this.config.readReplicaCheckIntervalMs,
    );
    this.timer.unref();
  }

  /** A measurement that cannot be made leaves the last one standing (it ages out of routing). */
  private async checkSafely(): Promise<void> {
    try {
      await this.check();
    } catch (error) {
      this.logger.error({ err: error }, `read replica measurement failed: ${messageOf(error)}`);
    }
  }

  private async check(): Promise<void> {
    let primaryError: string | null = null;
    const sentAt = Date.now();
    try {
      const row = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.samples.add(sentAt, parseLsn(row.lsn) as bigint);
    } catch (error) {
      primaryError = `primary WAL position unavailable: ${messageOf(error)}`;
    }
    await Promise.all(this.replicas.map((replica) => this.measure(replica, primaryError)));
  }

  private async measure(replica: Replica, primaryError: string | null): Promise<void> {
    let row: { recovery: boolean; replay: string | null };
    try {
      row = await replica.probe.query(
        'SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replay',
      );
    } catch (error) {
      if (!this.stopped) this.markDown(replica, error);
      return;
    }
    if (this.stopped) return;
    replica.checkedAt = new Date();
    if (!row.recovery)
      return this.setStatus(replica, 'not_replica', null, 'the server is not in recovery (not a streaming replica)');
    const measuredAt = Date.now();
    const lag = primaryError ? null : this.samples.lagMs(parseLsn(row.replay), measuredAt);
    if (lag === null || lag > this.config.readReplicaMaxLagMs) {
      return this.setStatus(replica, 'lagging', lag, primaryError ?? (lag === null ? 'lag unknown' : null));
    }
    if (!replica.dataSource) {
      try {
        replica.dataSource = await this.open(replica);
      } catch (error) {
        return this.markDown(replica, error);
      }
    }
    replica.measuredAt = measuredAt;
    this.setStatus(replica, 'available', lag, null);
  }

  /** The replica's pool: the primary's settings (timeouts, session options), no migrations. */
  private async open(replica: Replica): Promise<DataSource> {
    const options = dataSourceOptions(this.config, replica.url);
    const dataSource = new DataSource({
      ...options,
      migrations: [],
      extra: { ...options.extra, application_name: 'tracker-pipeline-read' },
    });
    await dataSource.initialize();
    if (this.stopped) {
      await dataSource.destroy();
      throw new Error('shutting down');
    }
    const pool = pgPool(dataSource);
    for (const client of (pool as unknown as { _clients?: pg.Client[] })._clients ?? []) replica.clients.add(client);
    pool.on('connect', (client) => replica.clients.add(client as unknown as pg.Client));
    pool.on('remove', (client) => replica.clients.delete(client as unknown as pg.Client));
    return dataSource;
  }

  private markDown(replica: Replica, error: unknown): void {
    replica.checkedAt = new Date();
    this.setStatus(replica, 'down', null, messageOf(error));
    // Reads in flight on it wait for a server that is gone or silent: end them so the primary answers now.
    for (const client of replica.clients) {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
  }

  private setStatus(replica: Replica, status: ReplicaStatus, lagMs: number | null, error: string | null): void {
    if (status !== replica.status) {
      const detail = error ?? (lagMs === null ? '' : `lag ${lagMs} ms`);
      const line = `read replica ${replica.name} (${replica.address}): ${replica.status} → ${status}${detail ? ` (${detail})` : ''}`;
      if (status === 'available') this.logger.log(line);
      else this.logger.warn(line);
    }
    replica.status = status;
    replica.lagMs = lagMs;
    replica.error = error;
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 200) || 'unknown error';
}
