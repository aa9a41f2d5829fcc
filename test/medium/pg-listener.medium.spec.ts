import { Logger } from '@nestjs/common';
import { PgListener } from '../../src/infrastructure/database/pg-listener.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/*
 * PgListener: one dedicated LISTEN session shared by the cache invalidation bus and the notification
 * streams. Each channel reaches its own callback; a lost session is reported, reopened, and
 * reported up again; stop() ends it for good.
 */
describe('PgListener', () => {
  let m: MediumContext;
  let listener: PgListener | undefined;

  beforeAll(async () => {
    m = await createMediumContext({ factories: false });
  });
  afterEach(async () => listener?.stop());
  afterAll(async () => m?.close());

  const until = async (check: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  function open(events: string[]): PgListener {
    const logger = new Logger('test');
    logger.warn = () => undefined;
    return new PgListener({
      connectionString: m.config.databaseUrl as string,
      applicationName: 'tps-pg-listener-test',
      channels: { probe_a: (p) => events.push(`a:${p}`), probe_b: (p) => events.push(`b:${p}`) },
      onUp: () => events.push('up'),
      onDown: () => events.push('down'),
      timeoutMs: 1000,
      heartbeatMs: 200,
      reconnectMinMs: 50,
      reconnectMaxMs: 200,
      what: 'test listener',
      logger,
    });
  }

  it('hands each channel its payloads, reconnects after the session is killed, and stops for good', async () => {
    const events: string[] = [];
    listener = open(events);
    await listener.start();
    expect(listener.connected).toBe(true);
    await m.db.query(`SELECT pg_notify('probe_a', 'one'), pg_notify('probe_b', '')`);
    await until(() => events.length >= 3);
    expect(events).toEqual(['up', 'a:one', 'b:']);

    await m.db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tps-pg-listener-test'`,
    );
    await until(() => events.filter((e) => e === 'up').length === 2);
    expect(events.slice(3)).toEqual(['down', 'up']);
    await m.db.query(`SELECT pg_notify('probe_a', 'two')`);
    await until(() => events.includes('a:two'));

    await listener.stop();
    expect(listener.connected).toBe(false);
    const sessions = await m.db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tps-pg-listener-test'`,
    );
    expect(sessions[0].n).toBe(0);
    await m.db.query(`SELECT pg_notify('probe_a', 'three')`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events).not.toContain('a:three');
    expect(events.filter((e) => e === 'down')).toHaveLength(1);
  });
});
