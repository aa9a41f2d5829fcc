import { ApiProperty } from '@nestjs/swagger';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';

export class StorageLocationVisitResponse {
  @ApiProperty({ ...ID_SCHEMA, nullable: true }) storage_location_id: number | null;
  @ApiProperty({ description: '"" when the entry names no storage location' }) location_name: string;
  @ApiProperty({ format: 'date-time' }) arrived_at: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'null while the visit is still open at as_of',
  })
  departed_at: string | null;
  @ApiProperty({ description: '(departed_at or as_of) − arrived_at, in days, 2 decimals' }) duration_days: number;
}

export class TrackerAnalyticsResponse {
  @ApiProperty(ID_SCHEMA) tracker_id: number;
  @ApiProperty() tracker_name: string;
  @ApiProperty({ description: '(delivered_at or as_of) − journey start, in days' }) total_journey_duration_days: number;
  @ApiProperty({ description: 'The first DELIVERED entry\'s location; not delivered: the destination\'s name, or ""' })
  delivery_location_name: string;
  @ApiProperty({ description: 'From delivered_at to the next entry (or as_of); 0 when not delivered' })
  delivery_location_duration_days: number;
  @ApiProperty() delivery_location_duration_hours: number;
  @ApiProperty({ enum: ['CREATED', 'IN_TRANSIT', 'IN_STORAGE', 'DELIVERED'] }) current_status: string;
  @ApiProperty({ enum: [0, 33.3, 66.7, 100] }) journey_completion_percent: number;
  @ApiProperty({ type: [StorageLocationVisitResponse] }) storage_location_visits: StorageLocationVisitResponse[];
  @ApiProperty() total_storage_duration_days: number;
}

export class AggregateMetricsResponse {
  @ApiProperty(COUNT_SCHEMA) total_trackers: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Trackers whose current status is DELIVERED' })
  completed_trackers: number;
  @ApiProperty({ description: 'completed / total × 100 (0 without trackers)' }) completion_rate_percent: number;
  @ApiProperty({ description: 'Over delivered trackers (0 when none)' })
  average_delivery_location_duration_days: number;
}

export class DeliveryLocationPerformanceResponse {
  @ApiProperty() location_name: string;
  @ApiProperty(COUNT_SCHEMA) tracker_count: number;
  @ApiProperty() average_duration_days: number;
  @ApiProperty() min_duration_days: number;
  @ApiProperty() max_duration_days: number;
}

export class StorageLocationPerformanceResponse {
  @ApiProperty({ ...ID_SCHEMA, nullable: true }) storage_location_id: number | null;
  @ApiProperty() location_name: string;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Distinct trackers that visited' }) tracker_count: number;
  @ApiProperty(COUNT_SCHEMA) visit_count: number;
  @ApiProperty() total_duration_days: number;
  @ApiProperty({ description: 'Per visit' }) average_duration_days: number;
  @ApiProperty() min_duration_days: number;
  @ApiProperty() max_duration_days: number;
}

export class ProductionRunAnalyticsResponse {
  @ApiProperty(ID_SCHEMA) production_run_id: number;
  @ApiProperty() production_run_description: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) production_run_start_date: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) production_run_end_date: string | null;
  @ApiProperty(COUNT_SCHEMA) total_trackers: number;
  @ApiProperty({ type: [TrackerAnalyticsResponse] }) tracker_analytics: TrackerAnalyticsResponse[];
  @ApiProperty() aggregate_metrics: AggregateMetricsResponse;
  @ApiProperty({ type: [DeliveryLocationPerformanceResponse] })
  delivery_location_performance: DeliveryLocationPerformanceResponse[];
  @ApiProperty({ type: [StorageLocationPerformanceResponse] })
  storage_location_performance: StorageLocationPerformanceResponse[];
}
