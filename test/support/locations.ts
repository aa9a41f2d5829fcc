import type { Type } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccessScope } from '../../src/common/auth/access-scope.js';
import { LocationIngestionService, type IngestResult } from '../../src/locations/location-ingestion.service.js';
import { dayBucket, hourBucket, isEligible } from '../../src/location-reports/location-rules.js';
import type { TestApp } from './app.js';

/** Helpers for the location pipeline tests. */

export interface ReportIn {
  tracker_id?: number;
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  accuracy_m?: number | null;
  source?: string | null;
}

/** A valid, eligible report (Berlin, confidence 3) with overrides. */
export function report(trackerId: number, timestamp: string, overrides: Partial<ReportIn> = {}): ReportIn {
  return { tracker_id: trackerId, timestamp, latitude: 52.52, longitude: 13.405, confidence: 3, ...overrides };
}

export function postReports(t: TestApp, user: { auth: { Authorization: string } }, reports: unknown[]) {
  return t.http().post('/api/v1/locations/reports').set(user.auth).send({ reports });
}

export interface AggregateRow {
  tracker_id: number;
  bucket: string;
  report_id: string;
  reported_at: string;
  latitude: number;
  longitude: number;
  confidence: number;
  /** Daily rows only: how many hourly rows the (tracker, day) has. */
  hourly_buckets?: number;
}

export interface RawRow {
  id: string;
  tracker_id: number;
  timestamp: string;
  latitude: number;
  longitude: number;
  confidence: number;
  accuracy_m: number | null;
  source: string | null;
  eligible: boolean;
}

const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Both aggregate tables, ordered, with timestamps as ISO strings (comparable with toEqual). */
export async function aggregateTables(
  db: DataSource,
  trackerIds?: number[],
): Promise<{ hourly: AggregateRow[]; daily: AggregateRow[] }> {
  const read = (table: string, extra = '') =>
    db.query<AggregateRow[]>(
      `SELECT tracker_id, ${ISO('bucket')} AS bucket, report_id::text AS report_id, ${ISO('reported_at')} AS reported_at, latitude, longitude, confidence${extra}
         FROM ${table} WHERE $1::int[] IS NULL OR tracker_id = ANY($1::int[]) ORDER BY tracker_id, bucket`,
      [trackerIds ?? null],
    );
  return {
    hourly: await read('location_history_hourly'),
    daily: await read('location_history_daily', ', hourly_buckets'),
  };
}

export async function rawReports(db: DataSource, trackerIds?: number[]): Promise<RawRow[]> {
  return db.query<RawRow[]>(
    // ORDER BY the column, not the text alias: as text, id 1000 would sort before 999.
    `SELECT r.id::text AS id, r.tracker_id, ${ISO('r.timestamp')} AS timestamp, r.latitude, r.longitude, r.confidence, r.accuracy_m, r.source, r.eligible
       FROM location_reports r WHERE $1::int[] IS NULL OR r.tracker_id = ANY($1::int[]) ORDER BY r.id`,
    [trackerIds ?? null],
  );
}

/**
 * The straightforward reference: per (tracker, UTC hour/day) the eligible raw report with the
 * greatest (timestamp, id); each daily row also counts its day's hourly rows. Written without SQL
 * so it checks the SQL.
 */
export function referenceAggregates(raw: RawRow[]): { hourly: AggregateRow[]; daily: AggregateRow[] } {
  const build = (bucketOf: (ms: number) => number) => {
    const best = new Map<string, { row: RawRow; bucket: number }>();
    for (const row of raw) {
      if (!isEligible(row)) continue;
      const ms = Date.parse(row.timestamp);
      const bucket = bucketOf(ms);
      const key = `${row.tracker_id}|${bucket}`;
      const current = best.get(key);
      const newer =
        !current ||
        ms > Date.parse(current.row.timestamp) ||
        (ms === Date.parse(current.row.timestamp) && BigInt(row.id) > BigInt(current.row.id));
      if (newer) best.set(key, { row, bucket });
    }
    return [...best.values()]
      .map(({ row, bucket }) => ({
        tracker_id: row.tracker_id,
        bucket: new Date(bucket).toISOString(),
        report_id: row.id,
        reported_at: row.timestamp,
        latitude: row.latitude,
        longitude: row.longitude,
        confidence: row.confidence,
      }))
      .sort((a, b) => a.tracker_id - b.tracker_id || a.bucket.localeCompare(b.bucket));
  };
  const hourly = build(hourBucket);
  const hoursPerDay = new Map<string, number>();
  for (const row of hourly) {
    const key = `${row.tracker_id}|${dayBucket(Date.parse(row.bucket))}`;
    hoursPerDay.set(key, (hoursPerDay.get(key) ?? 0) + 1);
  }
  const daily = build(dayBucket).map((row) => ({
    ...row,
    hourly_buckets: hoursPerDay.get(`${row.tracker_id}|${Date.parse(row.bucket)}`) ?? 0,
  }));
  return { hourly, daily };
}

/** ISO timestamp `hours` hours from now (negative: in the past), whole milliseconds. */
export function hoursFromNow(hours: number): string {
  return new Date(Date.now() + hours * 3_600_000).toISOString();
}

/**
 * The medium-tier equivalent of postReports: the same batch straight into LocationIngestionService,
 * in the scope the HTTP endpoint gives an ingest device (the whole fleet).
 */
export function ingestReports(
  m: { get<T>(token: Type<T>): T },
  user: { id: number },
  reports: unknown[],
): Promise<IngestResult> {
  return m.get(LocationIngestionService).ingest(AccessScope.admin(user.id), reports);
}
