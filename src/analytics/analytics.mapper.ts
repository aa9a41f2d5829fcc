import { isoUtc } from '../common/http/timestamps.js';
import type {
  AggregateMetricsResponse,
  DeliveryLocationPerformanceResponse,
  StorageLocationPerformanceResponse,
  StorageLocationVisitResponse,
  TrackerAnalyticsResponse,
} from './dto/analytics.response.js';
import type { AggregatesRow, DeliveryPerformanceRow, StoragePerformanceRow, StorageVisitRow, TrackerMetricsRow } from './analytics.repository.js';

const SECONDS_PER_DAY = 86_400;
const SECONDS_PER_HOUR = 3_600;

/** Journey completion per state (interface.md "States and transitions"); fixed values, not rounded. */
export const JOURNEY_COMPLETION_PERCENT: Readonly<Record<string, number>> = {
  CREATED: 0,
  IN_TRANSIT: 33.3,
  IN_STORAGE: 66.7,
  DELIVERED: 100,
};

/**
 * Half away from zero to 2 decimals. `toPrecision(15)` drops the binary drift of the scaling
 * (1.005 * 100 = 100.49999999999999) so 1.005 rounds to 1.01 as written.
 */
export function round2(value: number): number {
  if (!Number.isFinite(value)) return 0;
  const scaled = Math.round(Number((Math.abs(value) * 100).toPrecision(15)));
  return (Math.sign(value) * scaled) / 100 || 0;
}

export const days = (seconds: number): number => round2(seconds / SECONDS_PER_DAY);
export const hours = (seconds: number): number => round2(seconds / SECONDS_PER_HOUR);

export function toStorageVisitResponse(visit: StorageVisitRow): StorageLocationVisitResponse {
  return {
    storage_location_id: visit.storage_location_id,
    location_name: visit.location_name,
    arrived_at: isoUtc(visit.arrived_at) as string,
    departed_at: isoUtc(visit.departed_at),
    duration_days: days(visit.seconds),
  };
}

export function toTrackerAnalyticsResponse(row: TrackerMetricsRow): TrackerAnalyticsResponse {
  return {
    tracker_id: row.tracker_id,
    tracker_name: row.tracker_name,
    total_journey_duration_days: days(row.journey_seconds),
    delivery_location_name: row.delivery_location_name,
    delivery_location_duration_days: days(row.delivery_seconds),
    delivery_location_duration_hours: hours(row.delivery_seconds),
    current_status: row.current_status,
    journey_completion_percent: JOURNEY_COMPLETION_PERCENT[row.current_status] ?? 0,
    storage_location_visits: (row.visits ?? []).map(toStorageVisitResponse),
    total_storage_duration_days: days(row.storage_seconds),
  };
}

export function toAggregateMetricsResponse(row: AggregatesRow): AggregateMetricsResponse {
  return {
    total_trackers: row.total_trackers,
    completed_trackers: row.completed_trackers,
    completion_rate_percent: row.total_trackers === 0 ? 0 : round2((row.completed_trackers / row.total_trackers) * 100),
    average_delivery_location_duration_days: days(row.avg_delivery_seconds),
  };
}

export function toDeliveryPerformanceResponse(row: DeliveryPerformanceRow): DeliveryLocationPerformanceResponse {
  return {
    location_name: row.location_name,
    tracker_count: row.tracker_count,
    average_duration_days: days(row.avg_seconds),
    min_duration_days: days(row.min_seconds),
    max_duration_days: days(row.max_seconds),
  };
}

export function toStoragePerformanceResponse(row: StoragePerformanceRow): StorageLocationPerformanceResponse {
  return {
    storage_location_id: row.location_id,
    location_name: row.location_name,
    tracker_count: row.tracker_count,
    visit_count: row.visit_count,
    total_duration_days: days(row.total_seconds),
    average_duration_days: days(row.avg_seconds),
    min_duration_days: days(row.min_seconds),
    max_duration_days: days(row.max_seconds),
  };
}
