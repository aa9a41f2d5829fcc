import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import pg from 'pg';
import { LOCATION_WRITES_LOCK_KEY } from '../../src/location-reports/location-writes-lock.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/database.js';
import { BROKER_URL, mqttEnv, publish, publisher, reportTopic, uniqueMqttPrefix } from '../support/mqtt.js';
import { call, waitFor } from '../support/reliability.js';
import { buildIfNeeded, freePort, spawnService, type ServiceProcess } from '../support/service-process.js';
import { TEST_JWT_SECRET } from '../support/test-config.js';

const BASE = Date.parse('2025-11-26T00:00:00Z');
const reportAt = (second: number) => ({
  timestamp: new Date(BASE + second * 1000).toISOString(),
  latitude: 50,
  longitude: 8,
});

/**
 * The built service against the real broker: a SIGKILL between a message's receipt and its commit
 * loses nothing (the broker delivers it again to the same client id, and dedup keeps one copy of
 * what was stored already); a SIGTERM commits and acknowledges everything received before exiting.
 */
describe('MQTT ingest: durability (the built service killed or stopped mid-stream)', () => {
  const prefix = uniqueMqttPrefix();
  const env: Record<string, string> = { ...mqttEnv(prefix, 'svc'), MQTT_SESSION_EXPIRY_SECONDS: '600' };
  const deviceId = `${prefix}-device`;
  let database: string;
  let dataDir: string;
  let port: number;
  let service: ServiceProcess | undefined;
  let db: pg.Client;
  let trackerId: number;
  let pub: MqttClient;

  const start = async () => {
    service = spawnService({
      NODE_ENV: 'development',
      PORT: String(port),
      DATABASE_URL: databaseUrl(database),
      JWT_SECRET: TEST_JWT_SECRET,
      DATA_DIR: dataDir,
      SEED_DEMO_DATA: 'false',
      GEOFENCE_ENABLED: 'false',
      LOG_LEVEL: 'info',
      ...env,
    });
    await waitFor(
      async () => (await call(`http://127.0.0.1:${port}`, 'GET', '/openapi.json', { timeoutMs: 1000 })).status === 200,
      60_000,
    ).catch((error: Error) => {
      throw new Error(`service did not start: ${error.message}\n${service?.stdout()}${service?.stderr()}`);
    });
    await waitFor(async () => {
      const metrics = await call(`http://127.0.0.1:${port}`, 'GET', '/metrics', { timeoutMs: 1000 });
      return /^mqtt_ingest_connected 1$/m.test(String(metrics.body));
    }, 10_000);
  };
  const stored = async () =>
    (
      await db.query<{ timestamp: Date }>(
        'SELECT timestamp FROM location_reports WHERE tracker_id = $1 ORDER BY timestamp',
        [trackerId],
      )
    ).rows.map((row) => row.timestamp.toISOString());
  const eventuallyStored = async (count: number) => {
    await waitFor(async () => (await stored()).length === count, 15_000);
    return stored();
  };

  /** Takes the location-writes lock exclusively: every ingest waits at its first statement until `end()`. */
  const holdLocationWrites = async () => {
    const blocker = new pg.Client({ connectionString: databaseUrl(database) });
    await blocker.connect();
    await blocker.query('SELECT pg_advisory_lock($1)', [LOCATION_WRITES_LOCK_KEY]);
    return blocker;
  };
  /** Until an ingest statement of the service waits for that lock (the messages are received, not committed). */
  const ingestWaiting = () =>
    waitFor(async () => {
      const { rows } = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock_shared%'`,
        [database],
      );
      return rows.length > 0;
    }, 10_000);

  beforeAll(async () => {
    buildIfNeeded();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'tps-mqtt-'));
    port = await freePort();
    db = new pg.Client({ connectionString: databaseUrl(database) });
    await db.connect();
    const { rows } = await db.query<{ id: number }>(
      `WITH c AS (INSERT INTO clients (name) VALUES ('mqtt') RETURNING id),
            b AS (INSERT INTO brands (name, client_id) SELECT 'mqtt', id FROM c RETURNING id),
            r AS (INSERT INTO production_runs (description, brand_id, start_date) SELECT 'mqtt', id, now() FROM b RETURNING id)
       INSERT INTO trackers (name, production_run_id, status, device_id) SELECT 'TRK-mqtt', r.id, 'CREATED', $1 FROM r
       RETURNING id`,
      [deviceId],
    );
    trackerId = rows[0].id;
    pub = await publisher();
  }, 180_000);
  afterAll(async () => {
    await pub?.endAsync();
    await service?.cleanup();
    await db?.end();
    if (database) await dropTestDatabase(database);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('a message received but not committed at a SIGKILL is delivered again after the restart; dedup keeps one copy', async () => {
    await start();
    const topic = reportTopic(prefix, deviceId);
    await publish(pub, topic, [reportAt(1)]);
    expect(await eventuallyStored(1)).toEqual([new Date(BASE + 1000).toISOString()]);

    // Hold the ingest at its first statement (the location-writes lock), then kill the service there.
    const blocker = await holdLocationWrites();
    try {
      await publish(pub, topic, [reportAt(1), reportAt(2)]);
      await ingestWaiting();
      expect(await service?.stop('SIGKILL', 10_000)).toMatchObject({ signal: 'SIGKILL' });
    } finally {
      await blocker.end();
    }
    expect(await stored()).toHaveLength(1);

    await start();
    expect(await eventuallyStored(2)).toEqual([
      new Date(BASE + 1000).toISOString(),
      new Date(BASE + 2000).toISOString(),
    ]);
  });

  it('SIGTERM while a batch waits on the database: the batch is committed and acknowledged before the service exits', async () => {
    const topic = reportTopic(prefix, deviceId);
    const before = (await stored()).length;
    const blocker = await holdLocationWrites();
    let exit: Promise<unknown> | undefined;
    try {
      await Promise.all(Array.from({ length: 300 }, (_, i) => publish(pub, topic, reportAt(100 + i))));
      await ingestWaiting();
      exit = service?.stop('SIGTERM', 30_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await blocker.end();
    }
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(await stored()).toHaveLength(before + 300);

    // The session stays (the next start of this client id resumes it) and holds nothing unacknowledged:
    // resumed, it delivers nothing before a marker published after the resume.
    const resumed = await connectAsync(BROKER_URL, {
      clientId: env.MQTT_CLIENT_ID,
      clean: false,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 0 },
      reconnectPeriod: 0,
    });
    const got: string[] = [];
    resumed.on('message', (_topic, payload) => got.push(payload.toString()));
    try {
      await resumed.subscribeAsync(`$share/${prefix}/${prefix}/+/reports`, { qos: 1 });
      await publish(pub, topic, 'marker');
      await waitFor(async () => got.includes('marker'), 5000);
      expect(got).toEqual(['marker']);
    } finally {
      await resumed.endAsync();
    }
  });
});
