import type {
  AggregateMetricsResponse,
  DeliveryLocationPerformanceResponse,
  StorageLocationPerformanceResponse,
  TrackerAnalyticsResponse,
} from './dto/analytics.response.js';
import type { AggregatesRow, DeliveryPerformanceRow, StoragePerformanceRow, TrackerAnalyticsRow } from './analytics.repository.js';

/**
 * Wire shapes of the analytics. The SQL already computes and rounds every figure (see
 * analytics.repository.ts); these mappers only fix the field set and order, and add the fixed
 * completion value per state.
 */

/** Journey completion per state (interface.md "States and transitions"); fixed values, not rounded. */
export const JOURNEY_COMPLETION_PERCENT: Readonly<Record<string, number>> = {
  CREATED: 0,
  IN_TRANSIT: 33.3,
  IN_STORAGE: 66.7,
  DELIVERED: 100,
};

export function toTrackerAnalyticsResponse(row: TrackerAnalyticsRow): TrackerAnalyticsResponse {
  return {
    tracker_id: row.tracker_id,
    tracker_name: row.tracker_name,
    total_journey_duration_days: row.total_journey_duration_days,
    delivery_location_name: row.delivery_location_name,
    delivery_location_duration_days: row.delivery_location_duration_days,
    delivery_location_duration_hours: row.delivery_location_duration_hours,
    current_status: row.current_status,
    journey_completion_percent: JOURNEY_COMPLETION_PERCENT[row.current_status] ?? 0,
    // Built by the SQL in wire shape: {storage_location_id, location_name, arrived_at, departed_at, duration_days}.
    storage_location_visits: row.storage_location_visits ?? [],
    total_storage_duration_days: row.total_storage_duration_days,
  };
}

export function toAggregateMetricsResponse(row: AggregatesRow): AggregateMetricsResponse {
  return {
    total_trackers: row.total_trackers,
    completed_trackers: row.completed_trackers,
    completion_rate_percent: row.completion_rate_percent,
    average_delivery_location_duration_days: row.average_delivery_location_duration_days,
  };
}

export function toDeliveryPerformanceResponse(row: DeliveryPerformanceRow): DeliveryLocationPerformanceResponse {
  return {
    location_name: row.location_name,
    tracker_count: row.tracker_count,
    average_duration_days: row.average_duration_days,
    min_duration_days: row.min_duration_days,
    max_duration_days: row.max_duration_days,
  };
}

export function toStoragePerformanceResponse(row: StoragePerformanceRow): StorageLocationPerformanceResponse {
  return {
    storage_location_id: row.storage_location_id,
    location_name: row.location_name,
    tracker_count: row.tracker_count,
    visit_count: row.visit_count,
    total_duration_days: row.total_duration_days,
    average_duration_days: row.average_duration_days,
    min_duration_days: row.min_duration_days,
    max_duration_days: row.max_duration_days,
  };
}
