import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Db, sql } from '../../src/infrastructure/database/db.js';
import { OutboxConsumer, type DeliveryOutcome } from '../../src/infrastructure/outbox/outbox-consumer.js';
import { OutboxMetrics } from '../../src/infrastructure/outbox/outbox-metrics.js';
import { OutboxQueue, type OutboxClaim, type OutboxTable } from '../../src/infrastructure/outbox/outbox-queue.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * The outbox kit on a table of its own (not mail's): claims with a lease and a fencing token,
 * outcomes, backoff, giving up by attempts, and the metrics a consumer gets for free.
 */
describe('outbox kit', () => {
  let m: MediumContext;
  let queue: OutboxQueue<OutboxClaim & { topic: string }>;

  beforeAll(async () => {
    m = await createMediumContext({ factories: false });
    await m.db.query(`CREATE TABLE probe_outbox (
      id bigserial PRIMARY KEY, topic text NOT NULL, status text NOT NULL DEFAULT 'waiting',
      run_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, claim_no int NOT NULL DEFAULT 0,
      tries int NOT NULL DEFAULT 0, first_try timestamptz, error text, done_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now())`);
    queue = new OutboxQueue(m.get(Db), queueSpec);
  });
  afterAll(async () => m?.close());

  const queueSpec = {
    table: 'probe_outbox',
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
      readyAt: 'created_at',
    },
    claimReturning: sql`o.topic`,
  } satisfies OutboxTable;

  const rows = () =>
    m.db.query(`SELECT topic, status, tries, error, lease_until IS NOT NULL AS leased FROM probe_outbox ORDER BY id`);

  it('claims each due row once per lease, and only the latest claim records an outcome', async () => {
    await m.db.query(`TRUNCATE probe_outbox; INSERT INTO probe_outbox (topic) VALUES ('a'), ('b')`);
    const first = await queue.claim(10, 60);
    expect(first.map((c) => [c.topic, c.claims, c.attempts])).toEqual([
      ['a', 1, 0],
      ['b', 1, 0],
    ]);
    expect(await queue.claim(10, 60)).toEqual([]);
    await m.db.query(`UPDATE probe_outbox SET lease_until = now() - interval '1 second' WHERE topic = 'a'`);
    const again = await queue.claim(10, 60);
    expect(again.map((c) => [c.topic, c.claims])).toEqual([['a', 2]]);
    expect(await queue.markDone(first[0])).toBe(false);
    expect(await queue.markDone(again[0])).toBe(true);
    expect(await queue.markDone(first[1])).toBe(true);
    expect(await rows()).toEqual([
      { topic: 'a', status: 'delivered', tries: 1, error: null, leased: false },
      { topic: 'b', status: 'delivered', tries: 1, error: null, leased: false },
    ]);
  });

  it('delivers through the callback: sent, retried with backoff, given up by attempts or by the consumer, with metrics', async () => {
    await m.db.query(
      `TRUNCATE probe_outbox; INSERT INTO probe_outbox (topic, created_at) VALUES ('ok', now() - interval '1 minute'), ('flaky', now()), ('bad', now()), ('throws', now())`,
    );
    const registry = new Registry();
    const metrics = new OutboxMetrics(
      registry,
      {
        claimed: { name: 'probe_claimed_total', help: 'h' },
        sent: { name: 'probe_sent_total', help: 'h' },
        retried: { name: 'probe_retried_total', help: 'h' },
        givenUp: { name: 'probe_given_up_total', help: 'h', reasons: ['bad'] },
        oldestDueAge: { name: 'probe_oldest_age_seconds', help: 'h' },
      },
      () => queue.oldestDueAgeSeconds(),
    );
    expect(await queue.oldestDueAgeSeconds()).toBeGreaterThanOrEqual(59);
    const logger = new Logger('probe');
    logger.warn = () => undefined;
    const outcomes: Record<string, DeliveryOutcome> = {
      ok: { kind: 'sent' },
      flaky: { kind: 'retry', reason: 'try later' },
      bad: { kind: 'give-up', reason: 'never', label: 'bad' },
    };
    const prepared: string[][] = [];
    const consumer = new OutboxConsumer({
      queue,
      what: 'probe',
      logger,
      pollMs: 60_000,
      batchSize: 3,
      leaseSeconds: 60,
      retry: { minMs: 60_000, maxMs: 60_000, maxAttempts: 2 },
      prepare: async (claims) => void prepared.push(claims.map((c) => c.topic)),
      deliver: async (claim) => {
        if (claim.topic === 'throws') throw new Error('boom');
        return outcomes[claim.topic];
      },
      metrics,
    });
    expect(await consumer.drain()).toBe(1);
    expect(prepared).toEqual([['ok', 'flaky', 'bad'], ['throws']]);
    expect(await rows()).toEqual([
      { topic: 'ok', status: 'delivered', tries: 1, error: null, leased: false },
      { topic: 'flaky', status: 'waiting', tries: 1, error: 'try later', leased: false },
      { topic: 'bad', status: 'dead', tries: 1, error: 'never', leased: false },
      { topic: 'throws', status: 'waiting', tries: 1, error: 'boom', leased: false },
    ]);
    // Backed off by about a minute (minus at most 10 % jitter): nothing is due now.
    const due = await m.db.query(
      `SELECT extract(epoch FROM run_at - now())::float8 AS s FROM probe_outbox WHERE topic = 'flaky'`,
    );
    expect(due[0].s).toBeGreaterThan(50);
    expect(due[0].s).toBeLessThanOrEqual(60);
    expect(await consumer.drain()).toBe(0);

    // The second failure reaches maxAttempts: given up as expired.
    await m.db.query(`UPDATE probe_outbox SET run_at = now() WHERE status = 'waiting'`);
    expect(await consumer.drain()).toBe(0);
    expect((await rows()).map((r: { status: string; tries: number }) => [r.status, r.tries])).toEqual([
      ['delivered', 1],
      ['dead', 2],
      ['dead', 1],
      ['dead', 2],
    ]);
    expect(await queue.oldestDueAgeSeconds()).toBe(0);
    const text = await registry.metrics();
    expect(text).toMatch(/^probe_claimed_total 6$/m);
    expect(text).toMatch(/^probe_sent_total 1$/m);
    expect(text).toMatch(/^probe_retried_total 2$/m);
    expect(text).toMatch(/^probe_given_up_total\{reason="bad"\} 1$/m);
    expect(text).toMatch(/^probe_given_up_total\{reason="expired"\} 2$/m);
    expect(text).toMatch(/^probe_oldest_age_seconds 0$/m);
    await consumer.stop();
  });
});
