import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Db } from '../../src/infrastructure/database/db.js';
import { OutboxConsumer } from '../../src/infrastructure/outbox/outbox-consumer.js';
import { OutboxMetrics } from '../../src/infrastructure/outbox/outbox-metrics.js';
import { OutboxQueue, type OutboxClaim } from '../../src/infrastructure/outbox/outbox-queue.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * A burst into an outbox table without planner statistics: the claim would sort the whole backlog
 * on every call (the planner takes it for a handful of rows). The consumer takes the statistics
 * while it has work, after which claims read the due index in order and stop at their limit.
 */
describe('outbox kit: planner statistics after a burst', () => {
  let m: MediumContext;
  let queue: OutboxQueue;

  beforeAll(async () => {
    m = await createMediumContext({ factories: false });
    await m.db.query(`CREATE TABLE probe_burst (
        id bigserial PRIMARY KEY, status text NOT NULL DEFAULT 'waiting', run_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz, claim_no int NOT NULL DEFAULT 0, tries int NOT NULL DEFAULT 0, first_try timestamptz,
        error text, done_at timestamptz);
      CREATE INDEX probe_burst_due_idx ON probe_burst (run_at, id) WHERE status = 'waiting';
      INSERT INTO probe_burst (status) SELECT 'waiting' FROM generate_series(1, 30000);`);
    queue = new OutboxQueue(m.get(Db), {
      table: 'probe_burst',
      idType: 'bigint',
      states: { pending: 'waiting', done: 'delivered', givenUp: 'dead' },
      columns: {
        id: 'id',
        state: 'status',
        dueAt: 'run_at',
        claimedUntil: 'lease_until',
        claims: 'claim_no',
        attempts: 'tries',
        firstAttemptAt: 'first_try',
        lastError: 'error',
        finishedAt: 'done_at',
        readyAt: 'run_at',
      },
    });
  });
  afterAll(async () => m?.close());

  const claimPlan = async (): Promise<string> => {
    const plan = await m.db.query(`EXPLAIN SELECT id FROM probe_burst q
        WHERE status = 'waiting' AND run_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY run_at, id LIMIT 16 FOR UPDATE SKIP LOCKED`);
    return plan.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n');
  };
  const analyzed = async (): Promise<boolean> =>
    (await m.db.query(`SELECT reltuples >= 0 AS analyzed FROM pg_class WHERE relname = 'probe_burst'`))[0].analyzed;

  it('a consumer with work takes its table statistics once; the claim then reads the due index in order', async () => {
    expect(await analyzed()).toBe(false);
    expect(await claimPlan()).toMatch(/Sort/);
    const logger = new Logger('probe');
    logger.warn = () => undefined;
    let stopping: Promise<unknown> | undefined;
    const consumer = new OutboxConsumer<OutboxClaim, undefined>({
      queue,
      what: 'probe',
      logger,
      pollMs: 60_000,
      batchSize: 50,
      leaseSeconds: 60,
      retry: { minMs: 60_000, maxMs: 60_000 },
      prepare: async () => undefined,
      // The first delivery stops the consumer: what matters is what its first claim left behind.
      deliver: async () => {
        stopping ??= consumer.stop();
        return { kind: 'sent' };
      },
      metrics: new OutboxMetrics(
        new Registry(),
        {
          claimed: { name: 'probe_burst_claimed', help: 'h' },
          sent: { name: 'probe_burst_sent', help: 'h' },
          retried: { name: 'probe_burst_retried', help: 'h' },
          givenUp: { name: 'probe_burst_given_up', help: 'h', reasons: [] },
          oldestDueAge: { name: 'probe_burst_age', help: 'h' },
        },
        () => queue.oldestDueAgeSeconds(),
      ),
    });
    expect(await consumer.drain()).toBeGreaterThan(0);
    await stopping;
    expect(await analyzed()).toBe(true);
    const plan = await claimPlan();
    expect(plan).toMatch(/Index Scan using probe_burst_due_idx/);
    expect(plan).not.toMatch(/Sort/);
    // Nothing changed since: no second ANALYZE.
    expect(await queue.refreshStatisticsIfStale()).toBe(false);
  });
});
