import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { OutboxConsumer } from '../../src/infrastructure/outbox/outbox-consumer.js';
import { OutboxMetrics } from '../../src/infrastructure/outbox/outbox-metrics.js';
import { OutboxQueue, type OutboxClaim } from '../../src/infrastructure/outbox/outbox-queue.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * The outbox kit with concurrency: deliveries run side by side up to `concurrency`, a group (one
 * receiver) never holds more than `perGroupLimit` of them, a row that fails `claimWhere` waits, and
 * wake() makes a running pass claim what became due while others are still in flight.
 */
describe('outbox kit: concurrent deliveries', () => {
  let m: MediumContext;
  let queue: OutboxQueue<OutboxClaim & { topic: string }>;
  let n = 0;

  beforeAll(async () => {
    m = await createMediumContext({ factories: false });
    await m.db.query(`CREATE TABLE probe_groups (grp text PRIMARY KEY, open boolean NOT NULL DEFAULT true);
      CREATE TABLE probe_jobs (
        id bigserial PRIMARY KEY, grp text NOT NULL, topic text NOT NULL, status text NOT NULL DEFAULT 'waiting',
        run_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, claim_no int NOT NULL DEFAULT 0,
        tries int NOT NULL DEFAULT 0, first_try timestamptz, error text, done_at timestamptz)`);
    queue = new OutboxQueue(m.get(Db), {
      table: 'probe_jobs',
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
      claimWhere: sql`EXISTS (SELECT 1 FROM probe_groups g WHERE g.grp = q.grp AND g.open)`,
      groupBy: 'grp',
      claimReturning: sql`o.topic`,
    });
  });
  afterAll(async () => m?.close());

  const consumer = (deliver: (claim: OutboxClaim & { topic: string }) => Promise<void>, pollMs = 50) => {
    const logger = new Logger('probe');
    logger.warn = () => undefined;
    const names = (k: string) => ({ name: `probe_${k}_${++n}`, help: 'h' });
    return new OutboxConsumer({
      queue,
      what: 'probe',
      logger,
      pollMs,
      batchSize: 4,
      concurrency: 4,
      perGroupLimit: 2,
      leaseSeconds: 60,
      retry: { minMs: 60_000, maxMs: 60_000 },
      prepare: async () => undefined,
      deliver: async (claim) => {
        await deliver(claim);
        return { kind: 'sent' };
      },
      metrics: new OutboxMetrics(
        new Registry(),
        {
          claimed: names('claimed'),
          sent: names('sent'),
          retried: names('retried'),
          givenUp: { ...names('given_up'), reasons: [] },
          oldestDueAge: names('age'),
        },
        () => queue.oldestDueAgeSeconds(),
      ),
    });
  };

  it('a stuck group holds at most its share of the slots; every other row is delivered meanwhile', async () => {
    await m.db.query(`TRUNCATE probe_jobs; DELETE FROM probe_groups;
      INSERT INTO probe_groups (grp) VALUES ('slow'), ('fast');
      INSERT INTO probe_jobs (grp, topic) SELECT 'slow', 'slow-' || i FROM generate_series(1, 6) i;
      INSERT INTO probe_jobs (grp, topic) SELECT 'fast', 'fast-' || i FROM generate_series(1, 10) i;`);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let slowInFlight = 0;
    let slowMax = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const fastDone: string[] = [];
    const c = consumer(async (claim) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (claim.topic.startsWith('slow')) {
        slowMax = Math.max(slowMax, ++slowInFlight);
        await gate;
        slowInFlight--;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 5));
        fastDone.push(claim.topic);
      }
      inFlight--;
    });
    const pass = c.drain();
    const deadline = Date.now() + 15_000;
    while (fastDone.length < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fastDone).toHaveLength(10);
    expect(slowInFlight).toBe(2);
    release();
    expect(await pass).toBe(16);
    expect(slowMax).toBe(2);
    expect(maxInFlight).toBeLessThanOrEqual(4);
    await c.stop();
  });

  it('rows that fail claimWhere wait (and leave the queue age alone); wake() claims a new row during a pass', async () => {
    await m.db.query(`TRUNCATE probe_jobs; DELETE FROM probe_groups;
      INSERT INTO probe_groups (grp, open) VALUES ('closed', false), ('slow', true), ('late', true);
      INSERT INTO probe_jobs (grp, topic, run_at) VALUES ('closed', 'closed-1', now() - interval '1 hour'), ('slow', 'slow-1', now());`);
    expect(await queue.oldestDueAgeSeconds()).toBeLessThan(60);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const done: string[] = [];
    // No poll within the test: only wake() can make the running pass look again.
    const c = consumer(async (claim) => {
      if (claim.topic === 'slow-1') await gate;
      done.push(claim.topic);
    }, 60_000);
    const pass = c.drain();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await m.db.query(`INSERT INTO probe_jobs (grp, topic) VALUES ('late', 'late-1')`);
    c.wake();
    const deadline = Date.now() + 10_000;
    while (!done.includes('late-1') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done).toEqual(['late-1']);
    release();
    expect(await pass).toBe(2);
    expect(done).toEqual(['late-1', 'slow-1']);
    const rows = await m.db.query(`SELECT topic, status FROM probe_jobs ORDER BY id`);
    expect(rows).toEqual([
      { topic: 'closed-1', status: 'waiting' },
      { topic: 'slow-1', status: 'delivered' },
      { topic: 'late-1', status: 'delivered' },
    ]);
    await c.stop();
  });
});
