import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { COUNT_SCHEMA, ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { ALERT_KINDS, type AlertKind } from './alert-kinds.js';

/** Alert ids are bigint: they outgrow int4. */
const BIG_ID_SCHEMA = { type: 'integer', minimum: 1 } as const;
const TIMESTAMP = { type: 'string', format: 'date-time', example: '2026-11-21T10:04:05.123Z' } as const;

/** `details` of a `silent` alert. */
export class SilentAlertDetails {
  @ApiProperty({ ...TIMESTAMP, nullable: true, description: "The newest report's timestamp (null: none yet)" })
  last_report_at: string | null;
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 720, example: 24, description: 'The threshold in force' })
  threshold_hours: number;
}

/** `details` of an `overdue` alert. */
export class OverdueAlertDetails {
  @ApiProperty({ ...TIMESTAMP, description: "The journey's start" }) start: string;
  @ApiProperty({ type: 'number', example: 6.25, description: 'p90 of the comparable journeys, in days (unrounded)' })
  p90_days: number;
  @ApiProperty({ enum: ['destination', 'all'] }) basis: 'destination' | 'all';
  @ApiProperty({ type: 'integer', minimum: 5, description: 'Comparable journeys of the basis' })
  sample_size: number;
}

/** `details` of a `battery_low` alert. */
export class BatteryLowAlertDetails {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 100, example: 9 }) battery: number;
  @ApiProperty({ ...TIMESTAMP, description: 'Timestamp of the report that carried it' }) reported_at: string;
}

export type AlertDetails = SilentAlertDetails | OverdueAlertDetails | BatteryLowAlertDetails;

/** A condition of a tracker with a start and an end. */
export class AlertResponse {
  @ApiProperty({ ...BIG_ID_SCHEMA, example: 311 }) id: number;
  @ApiProperty({ enum: ALERT_KINDS, example: 'silent' }) kind: AlertKind;
  @ApiProperty({ ...ID_SCHEMA, example: 42 }) tracker_id: number;
  @ApiProperty({ example: 'TRK-0042' }) tracker_name: string;
  @ApiProperty({ ...ID_SCHEMA, example: 7 }) production_run_id: number;
  @ApiProperty({ ...ID_SCHEMA, example: 3 }) client_id: number;
  @ApiProperty({ ...TIMESTAMP, description: 'When the service opened it' }) opened_at: string;
  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the service resolved it; null while open' })
  resolved_at: string | null;
  @ApiProperty({
    description: 'Snapshot taken when the alert opened; its shape depends on `kind`',
    oneOf: [
      { $ref: getSchemaPath(SilentAlertDetails) },
      { $ref: getSchemaPath(OverdueAlertDetails) },
      { $ref: getSchemaPath(BatteryLowAlertDetails) },
    ],
  })
  details: AlertDetails;
}

/** Open alerts of a production run's trackers, per kind. */
export class AlertSummaryResponse {
  @ApiProperty({ ...COUNT_SCHEMA, example: 2 }) silent: number;
  @ApiProperty({ ...COUNT_SCHEMA, example: 0 }) overdue: number;
  @ApiProperty({ ...COUNT_SCHEMA, example: 1 }) battery_low: number;
}
