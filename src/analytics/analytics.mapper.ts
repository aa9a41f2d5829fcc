import type {
  AggregateMetricsResponse,
  DeliveryLocationPerformanceResponse,
  StorageLocationPerformanceResponse,
} from './dto/analytics.response.js';
import type { AggregatesRow, DeliveryPerformanceRow, StoragePerformanceRow } from './analytics.repository.js';

/**
 * Wire shapes of the analytics. The SQL already computes and rounds every figure (see
 * analytics.repository.ts); these mappers only fix the field set and order. The tracker list of
 * the JSON result is written by the SQL itself (jsonRowsQuery).
 */

/** Journey completion per tracker state (docs/api.md); fixed values, not rounded. */
export const JOURNEY_COMPLETION_PERCENT: Readonly<Record<string, number>> = {
  CREATED: 0,
  IN_TRANSIT: 33.3,
  IN_STORAGE: 66.7,
  DELIVERED: 100,
};

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

function toStoragePerformanceResponse(row: StoragePerformanceRow): StorageLocationPerformanceResponse {
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

/** The sections of the JSON result after the tracker list, in its field order. */
export interface AggregateSections {
  aggregate_metrics: AggregateMetricsResponse;
  delivery_location_performance: DeliveryLocationPerformanceResponse[];
  storage_location_performance: StorageLocationPerformanceResponse[];
}

export function toAggregateSections(row: AggregatesRow): AggregateSections {
  return {
    aggregate_metrics: toAggregateMetricsResponse(row),
    delivery_location_performance: row.delivery_location_performance.map(toDeliveryPerformanceResponse),
    storage_location_performance: row.storage_location_performance.map(toStoragePerformanceResponse),
  };
}
