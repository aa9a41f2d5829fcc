import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { COUNT_SCHEMA } from '../../common/openapi/schema-types.js';

/** Wire shapes of the health endpoints (OpenAPI documentation). */

export class ComponentHealthResponse {
  @ApiProperty({ enum: ['healthy', 'unhealthy'] }) status: 'healthy' | 'unhealthy';
  @ApiProperty({ type: String, nullable: true, description: 'Why the component is unhealthy; null when healthy' })
  error: string | null;
}

export class BasicComponentsResponse {
  @ApiProperty() database: ComponentHealthResponse;
  @ApiProperty({ description: 'The cache store (Redis, or the in-process store without REDIS_URL)' })
  cache_store: ComponentHealthResponse;
}

export class ReadReplicaHealthResponse {
  @ApiProperty({ example: 'replica-1', description: 'Position in DATABASE_READ_URL: replica-1 is the first URL' })
  name: string;
  @ApiProperty({
    example: 'db-replica-1:5432/tracker_pipeline',
    description: 'host:port/database (never the credentials)',
  })
  address: string;
  @ApiProperty({
    enum: ['starting', 'available', 'lagging', 'down', 'not_replica'],
    description: 'Only an `available` replica serves reads; see docs/operations.md (read replicas)',
  })
  status: 'starting' | 'available' | 'lagging' | 'down' | 'not_replica';
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Upper bound of its lag behind the primary at the last measurement; null when unknown',
  })
  lag_ms: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '2026-11-21T10:04:05.123+00:00',
    description: 'Last measurement; null before the first',
  })
  checked_at: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it is not available; null when it is (or when it only lags)',
  })
  error: string | null;
}

export class ReadReplicasHealthResponse {
  @ApiProperty({ description: 'True while no replica is available: lag-tolerant reads go to the primary' })
  fallback: boolean;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'READ_REPLICA_MAX_LAG_MS' }) max_lag_ms: number;
  @ApiProperty({
    type: [ReadReplicaHealthResponse],
    description: 'In DATABASE_READ_URL order. Read counts per server are in the metrics (db_lag_tolerant_reads_total)',
  })
  replicas: ReadReplicaHealthResponse[];
}

export class BasicHealthResponse {
  @ApiProperty({ enum: ['healthy', 'unhealthy'] }) status: 'healthy' | 'unhealthy';
  @ApiProperty({ example: '2026-11-21T10:04:05.123+00:00' }) timestamp: string;
  @ApiProperty() components: BasicComponentsResponse;
  @ApiProperty() response_time_ms: number;
  @ApiPropertyOptional({
    description:
      'Present only when read replicas are configured (DATABASE_READ_URL). Informational: a lagging or unreachable replica ' +
      'does not make the service unhealthy, since the primary then serves its reads.',
  })
  read_replicas?: ReadReplicasHealthResponse;
}

export class SimpleStatusResponse {
  @ApiProperty({ enum: ['healthy', 'unhealthy'] }) status: 'healthy' | 'unhealthy';
  @ApiProperty({ example: '2026-11-21T10:04:05.123+00:00' }) timestamp: string;
}

export class PipelineStepResponse {
  @ApiProperty() name: string;
  @ApiProperty() success: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Step-specific figures (see docs/operations.md)',
  })
  details: Record<string, unknown>;
  @ApiProperty({ type: [String] }) issues: string[];
}

export class RecommendationResponse {
  @ApiProperty({ enum: ['critical', 'warning', 'info'] }) severity: 'critical' | 'warning' | 'info';
  @ApiProperty() issue: string;
  @ApiProperty() action: string;
  @ApiProperty({ example: 'docs/operations.md#check_aggregation_rules' }) documentation: string;
}

export class PipelineHealthResponse {
  @ApiProperty({ enum: ['healthy', 'degraded', 'unhealthy', 'error'] }) status:
    'healthy' | 'degraded' | 'unhealthy' | 'error';
  @ApiProperty({ example: '2026-11-21T10:04:05.123+00:00' }) timestamp: string;
  @ApiProperty({ description: 'Percent of passed steps (two decimals)' }) success_rate: number;
  @ApiProperty(COUNT_SCHEMA) successful_steps: number;
  @ApiProperty(COUNT_SCHEMA) total_steps: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/PipelineStepResponse' },
    description:
      'Keys: check_database_connection, check_required_tables, check_views_and_policies, check_aggregation_freshness, check_aggregation_rules, check_cache_store, check_status_consistency, check_geofence_processing, check_notification_delivery, check_webhook_delivery, check_mqtt_ingest',
  })
  test_steps: Record<string, PipelineStepResponse>;
  @ApiProperty({ type: [RecommendationResponse] }) recommendations: RecommendationResponse[];
  @ApiProperty() response_time_ms: number;
}

export class OverallMetricsResponse {
  @ApiProperty({ description: 'Pipeline success rate (percent)' }) success_rate: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Healthy basic components plus passed pipeline steps' })
  components_healthy: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Basic components plus pipeline steps' }) components_total: number;
  @ApiProperty() basic_response_time_ms: number;
  @ApiProperty() pipeline_response_time_ms: number;
  @ApiProperty() response_time_ms: number;
}

export class SystemHealthResponse {
  @ApiProperty({ enum: ['healthy', 'degraded', 'unhealthy', 'critical'] }) status:
    'healthy' | 'degraded' | 'unhealthy' | 'critical';
  @ApiProperty({ example: '2026-11-21T10:04:05.123+00:00' }) timestamp: string;
  @ApiProperty() basic: BasicHealthResponse;
  @ApiProperty() pipeline: PipelineHealthResponse;
  @ApiProperty() overall_metrics: OverallMetricsResponse;
}

export class PoolStatsResponse {
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Configured pool maximum (DB_POOL_SIZE)' }) size: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Connections available: size − checked_out' }) checked_in: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Connections in use' }) checked_out: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Requests waiting for a connection' }) overflow: number;
  @ApiProperty({ ...COUNT_SCHEMA, description: 'Open connections' }) total: number;
  @ApiProperty({ description: 'checked_out / size × 100' }) utilization_percent: number;
}

export class PoolConfigurationResponse {
  @ApiProperty() using_pgbouncer: boolean;
  @ApiProperty({ enum: ['development', 'test'] }) environment: string;
}

export class PoolHealthResponse {
  @ApiProperty({ enum: ['healthy', 'warning', 'critical'] }) status: 'healthy' | 'warning' | 'critical';
  @ApiProperty() pool_stats: PoolStatsResponse;
  @ApiProperty() configuration: PoolConfigurationResponse;
}
