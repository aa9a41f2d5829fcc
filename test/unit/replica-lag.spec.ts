import { loadConfig } from '../../src/common/config/app-config.js';
import { parseLsn, PrimaryWalSamples } from '../../src/infrastructure/database/replica-lag.js';
import { replicaStalenessBoundMs } from '../../src/infrastructure/database/read-replicas.js';

describe('replica lag from WAL positions', () => {
  it('parses pg_lsn text into bytes', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('0/16B3740')).toBe(0x16b3740n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn(null)).toBeNull();
    expect(() => parseLsn('garbage')).toThrow(/not a WAL position/);
  });

  it('an idle primary: a replica at the newest position is 0 ms behind however long ago the last write was', () => {
    const samples = new PrimaryWalSamples(60_000);
    samples.add(1_000, 500n);
    samples.add(50_000, 500n);
    expect(samples.lagMs(500n, 59_000)).toBe(0);
  });

  it('a replica behind: its lag is the age of the newest sample its replay position has reached', () => {
    const samples = new PrimaryWalSamples(60_000);
    samples.add(1_000, 100n);
    samples.add(2_000, 200n);
    samples.add(3_000, 300n);
    expect(samples.lagMs(250n, 3_500)).toBe(1_500); // has everything up to the 2 000 ms sample
    expect(samples.lagMs(100n, 3_500)).toBe(2_500);
    expect(samples.lagMs(300n, 3_500)).toBe(0);
    expect(samples.lagMs(350n, 3_500)).toBe(0); // past the newest sample (the primary moved since)
  });

  it('lag grows with time while replay stands still', () => {
    const samples = new PrimaryWalSamples(60_000);
    samples.add(0, 100n);
    samples.add(500, 200n);
    expect(samples.lagMs(100n, 600)).toBe(600);
    samples.add(1_000, 200n);
    expect(samples.lagMs(100n, 2_600)).toBe(2_600);
  });

  it('unknown: no sample yet, no replay position, or behind every sample kept', () => {
    const samples = new PrimaryWalSamples(1_000);
    expect(samples.lagMs(100n, 0)).toBeNull();
    samples.add(0, 100n);
    expect(samples.lagMs(null, 0)).toBeNull();
    samples.add(5_000, 200n);
    samples.add(10_000, 300n);
    // The 0 ms sample has gone; 5 000 ms is kept as the newest one older than the horizon.
    expect(samples.lagMs(100n, 10_000)).toBeNull();
    expect(samples.lagMs(200n, 10_000)).toBe(5_000);
  });
});

describe('read replica configuration', () => {
  it('DATABASE_READ_URL takes one or more comma-separated PostgreSQL URLs; defaults for lag and interval', () => {
    expect(loadConfig({}).databaseReadUrls).toEqual([]);
    const config = loadConfig({ DATABASE_READ_URL: ' postgres://a@r1:5432/db , postgresql://a@r2/db,' });
    expect(config.databaseReadUrls).toEqual(['postgres://a@r1:5432/db', 'postgresql://a@r2/db']);
    expect(config.readReplicaMaxLagMs).toBe(2000);
    expect(config.readReplicaCheckIntervalMs).toBe(500);
  });

  it('names a bad entry and bad bounds', () => {
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://a@r1/db,mysql://r2/db' })).toThrow(
      /DATABASE_READ_URL must be a postgres: or postgresql:\/\/ URL/,
    );
    expect(() => loadConfig({ READ_REPLICA_MAX_LAG_MS: '-1' })).toThrow(/READ_REPLICA_MAX_LAG_MS/);
    expect(() => loadConfig({ READ_REPLICA_CHECK_INTERVAL_MS: '10' })).toThrow(/READ_REPLICA_CHECK_INTERVAL_MS/);
  });

  it('the staleness bound adds the time until the next measurement to the allowed lag', () => {
    const config = loadConfig({ READ_REPLICA_MAX_LAG_MS: '2000', READ_REPLICA_CHECK_INTERVAL_MS: '500' });
    expect(replicaStalenessBoundMs(config)).toBe(2000 + 500 + 1000);
  });
});
