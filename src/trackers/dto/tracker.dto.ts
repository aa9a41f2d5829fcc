import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { applyDecorators } from '@nestjs/common';
import { DEVICE_ID_MESSAGE, DEVICE_ID_PATTERN } from '../../tracker-states/device-id.js';
import { TRACKER_STATES, type TrackerStatus } from '../../tracker-states/tracker-status.js';
import { IsoDateTime } from '../../common/http/iso-date-time.decorator.js';
import { PositiveId } from '../../common/http/id-field.js';
import { ID_SCHEMA } from '../../common/openapi/schema-types.js';
import { NameField, NotesField } from '../../common/http/text-fields.js';
import { OptionalIdField } from '../../common/http/optional-id-field.js';

const statusMessage = { message: `must be one of ${TRACKER_STATES.join(', ')}` };

/** Optional device id; null (on update: clears it) or 1..128 characters of [A-Za-z0-9._:-], unique among trackers. */
function DeviceIdField(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      pattern: DEVICE_ID_PATTERN.source,
      minLength: 1,
      maxLength: 128,
      description: 'The identity its device reports under (MQTT topic, device protocols); unique among all trackers',
    }),
    ValidateIf((_: object, value: unknown) => value !== undefined && value !== null),
    IsString(),
    Matches(DEVICE_ID_PATTERN, { message: DEVICE_ID_MESSAGE }),
  );
}

/** Body of `POST /trackers`. */
export class CreateTrackerDto {
  @NameField({ description: 'Trimmed; unique within the production run' })
  name: string;

  @ApiProperty(ID_SCHEMA)
  @PositiveId()
  production_run_id: number;

  @ApiPropertyOptional({ enum: TRACKER_STATES, default: 'CREATED' })
  @IsOptional()
  @IsIn(TRACKER_STATES, statusMessage)
  status?: TrackerStatus;

  @OptionalIdField({ nullable: true, description: 'Destination' })
  delivery_location_id?: number | null;

  @OptionalIdField({ nullable: true, description: 'Required if and only if status is IN_STORAGE' })
  storage_location_id?: number | null;

  @NotesField()
  notes?: string | null;

  @DeviceIdField()
  device_id?: string | null;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Time of the first status entry (default now; at most 5 minutes ahead)',
  })
  @IsOptional()
  @IsoDateTime()
  status_timestamp?: Date;
}

/**
 * Body of `PUT /trackers/{id}`: any subset. `name`, `production_run_id` and `status` cannot be
 * null; `delivery_location_id` and `notes` can (clearing them). `storage_location_id` is only
 * accepted with a change of status to IN_STORAGE (where it is required).
 */
export class UpdateTrackerDto {
  @NameField({}, { optional: true })
  name?: string;

  @ApiPropertyOptional(ID_SCHEMA)
  @ValidateIf((o: UpdateTrackerDto) => o.production_run_id !== undefined)
  @PositiveId()
  production_run_id?: number;

  @ApiPropertyOptional({
    enum: TRACKER_STATES,
    description: 'A changed status appends a status entry at the current time',
  })
  @ValidateIf((o: UpdateTrackerDto) => o.status !== undefined)
  @IsIn(TRACKER_STATES, statusMessage)
  status?: TrackerStatus;

  @OptionalIdField({ nullable: true })
  delivery_location_id?: number | null;

  @OptionalIdField({ description: 'Required when status changes to IN_STORAGE' })
  storage_location_id?: number | null;

  @NotesField()
  notes?: string | null;

  @DeviceIdField()
  device_id?: string | null;
}

/** Body of `POST /trackers/{id}/status`. */
export class CreateStatusEntryDto {
  @ApiProperty({ enum: TRACKER_STATES })
  @IsIn(TRACKER_STATES, statusMessage)
  status: TrackerStatus;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    description: 'Default now; more than 5 minutes in the future is rejected',
  })
  @IsOptional()
  @IsoDateTime()
  timestamp?: Date;

  @OptionalIdField({ nullable: true, description: 'Required for IN_STORAGE' })
  storage_location_id?: number | null;

  @OptionalIdField({ nullable: true, description: "For DELIVERED; defaults to the tracker's destination" })
  delivery_location_id?: number | null;

  @NotesField()
  notes?: string | null;
}
