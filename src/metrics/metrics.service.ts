import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { DatabaseGuard } from '../infrastructure/database/database-guard.js';
import { DatabasePool } from '../infrastructure/database/database-pool.js';
import { ReadReplicas } from '../infrastructure/database/read-replicas.js';
import { scrapedCounter, scrapedGauge } from '../infrastructure/metrics/scraped-metric.js';
import { CachedAnswers } from '../infrastructure/cache/cached-answers.js';

/** What happened to location reports in an ingest batch. */
const INGEST_OUTCOMES = [
  'accepted',
  'duplicate',
  'filtered_low_confidence',
  'filtered_manufacturing_region',
  'rejected',
] as const;
type IngestOutcome = (typeof INGEST_OUTCOMES)[number];

/** Latency buckets (seconds): fine below 100 ms where most requests are, coarse up to the 10 s limits. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Prometheus metrics of this process. Each app has its own Registry (not prom-client's global
 * one), so several apps in one process (tests, two instances) never clash. Values owned by other
 * components (pool, cache, database guard) are read when scraped, so those components do not
 * depend on this module.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly ingestReports: Counter<'outcome'>;
  private readonly inFlight: Gauge;

  constructor(
    pool: DatabasePool,
    guard: DatabaseGuard,
    cache: CacheService,
    replicas: ReadReplicas,
    answers: CachedAnswers,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests received and not yet answered',
      registers,
    });
    this.ingestReports = new Counter({
      name: 'ingest_reports_total',
      help: 'Location reports received, by outcome (filtered_* are accepted reports kept out of the history aggregates)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of INGEST_OUTCOMES) this.ingestReports.inc({ outcome }, 0);

    scrapedCounter(registers, {
      name: 'cache_requests_total',
      help: 'Cache reads by result (a read while the store is unavailable is a miss)',
      label: 'result',
      read: () => ({ hit: cache.stats.hits, miss: cache.stats.misses }),
    });
    scrapedCounter(registers, {
      name: 'http_answers_before_routing_total',
      help: 'Requests answered from the in-process cache tier before routing (an answer this caller got before, still current)',
      read: () => answers.stats.served,
    });
    scrapedCounter(registers, {
      name: 'cache_store_errors_total',
      help: 'Cache store operations that failed or timed out (the request carried on without the cache)',
      read: () => cache.stats.errors,
    });
    scrapedGauge(registers, {
      name: 'db_pool_connections',
      help: 'Database pool connections by state; size is the configured maximum',
      label: 'state',
      read: () => {
        const stats = pool.stats();
        return {
          size: stats.size,
          open: stats.total,
          idle: stats.idle,
          in_use: stats.checkedOut,
          waiting: stats.waiting,
        };
      },
    });
    scrapedCounter(registers, {
      name: 'db_pool_refused_total',
      help: 'Connection checkouts refused without waiting: database unreachable, or the wait queue full',
      label: 'reason',
      read: () => ({ unavailable: guard.refused.unavailable, exhausted: guard.refused.exhausted }),
    });
    scrapedCounter(registers, {
      name: 'db_lag_tolerant_reads_total',
      help: 'Reads that tolerate replica lag (lists, history, analytics, exports, pipeline health), by the server that answered: primary, or the replica (replica-1 is the first URL of DATABASE_READ_URL)',
      label: 'target',
      read: () => ({
        primary: replicas.reads.primary,
        ...Object.fromEntries(replicas.states().map((r) => [r.name, r.reads])),
      }),
    });
    scrapedCounter(registers, {
      name: 'db_replica_read_failovers_total',
      help: 'Replica reads that failed (replica gone, replay conflict) and were answered by the primary',
      read: () => replicas.reads.failovers,
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'Upper bound of the lag of each read replica behind the primary at the last measurement (absent while unknown)',
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of replicas.states()) if (r.lagMs !== null) this.set({ replica: r.name }, r.lagMs / 1000);
      },
    });
    scrapedGauge(registers, {
      name: 'db_replica_available',
      help: '1 while a read replica serves lag-tolerant reads, else 0 (lagging, down, starting or not a replica)',
      label: 'replica',
      read: () => Object.fromEntries(replicas.states().map((r) => [r.name, r.status === 'available' ? 1 : 0])),
    });
    scrapedGauge(registers, {
      name: 'db_available',
      help: '1 while the database answers the liveness probe, else 0',
      read: () => (guard.isAvailable ? 1 : 0),
    });
  }

  requestStarted(): void {
    this.inFlight.inc();
  }

  requestEnded(): void {
    this.inFlight.dec();
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  /** Adds `count` reports with this outcome. */
  recordIngest(outcome: IngestOutcome, count: number): void {
    if (count > 0) this.ingestReports.inc({ outcome }, count);
  }

  /** Records one ingest response; the filtered ones are a subset of accepted. */
  recordIngestResult(result: {
    accepted: number;
    duplicates: number;
    rejected: readonly unknown[];
    filtered_low_confidence: number;
    filtered_manufacturing_region: number;
  }): void {
    this.recordIngest('accepted', result.accepted);
    this.recordIngest('duplicate', result.duplicates);
    this.recordIngest('rejected', result.rejected.length);
    this.recordIngest('filtered_low_confidence', result.filtered_low_confidence);
    this.recordIngest('filtered_manufacturing_region', result.filtered_manufacturing_region);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
