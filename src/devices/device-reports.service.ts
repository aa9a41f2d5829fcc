import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { LocationIngestionService, type IngestResult } from '../locations/location-ingestion.service.js';
import { DevicesRepository } from './devices.repository.js';

/** Where a device report came from; stored as the report's `source`. */
export type DeviceSource = 'mqtt' | 'osmand' | 'owntracks';

/** Reports from these sources carry this confidence unless the report states its own (MQTT only). */
export const DEVICE_CONFIDENCE = 3;

/**
 * One report a device sent: its device id and the report in location-report fields, without
 * tracker_id (the device id names the tracker). `fields` that are not an object are judged like
 * any malformed report.
 */
export interface DeviceReport {
  deviceId: string;
  fields: unknown;
}

const TRACKER_ID_SENT = 'tracker_id: property should not exist (the device id names the tracker)';

/** Why a report was not stored (a duplicate is not a problem: it was stored before). */
export type ReportProblem = { kind: 'unknown_device' } | { kind: 'invalid'; detail: string };

export interface DeviceIngestOutcome {
  /** Per report, in order: null when stored now or before, else why not. */
  problems: (ReportProblem | null)[];
  /** What the location ingest answered for the reports of known devices (null: there were none). */
  result: IngestResult | null;
}

/**
 * Device reports into the location ingest: device ids become tracker ids (one query per call), then
 * every report goes through the same ingest as `POST /locations/reports` — one set-based statement
 * for the whole call, with its dedup, eligibility, aggregation and geofence marks.
 */
@Injectable()
export class DeviceReportsService {
  constructor(
    private readonly devices: DevicesRepository,
    private readonly ingestion: LocationIngestionService,
  ) {}

  async ingest(
    scope: AccessScope,
    source: DeviceSource,
    reports: readonly DeviceReport[],
  ): Promise<DeviceIngestOutcome> {
    const problems: (ReportProblem | null)[] = new Array<ReportProblem | null>(reports.length).fill(null);
    const trackerIds = await this.devices.trackerIds(scope, [...new Set(reports.map((r) => r.deviceId))]);
    const items: unknown[] = [];
    const reportOfItem: number[] = [];
    reports.forEach((report, i) => {
      const trackerId = trackerIds.get(report.deviceId);
      if (trackerId === undefined) {
        problems[i] = { kind: 'unknown_device' };
        return;
      }
      const fields = report.fields;
      if (typeof fields === 'object' && fields !== null && !Array.isArray(fields) && 'tracker_id' in fields) {
        problems[i] = { kind: 'invalid', detail: TRACKER_ID_SENT };
        return;
      }
      items.push(
        typeof fields === 'object' && fields !== null && !Array.isArray(fields)
          ? { confidence: DEVICE_CONFIDENCE, ...fields, tracker_id: trackerId, source }
          : fields,
      );
      reportOfItem.push(i);
    });
    if (items.length === 0) return { problems, result: null };
    const result = await this.ingestion.ingest(scope, items);
    for (const rejected of result.rejected) {
      // A tracker deleted since the lookup answers like a device nobody has.
      problems[reportOfItem[rejected.index]] = rejected.detail.startsWith('tracker_id:')
        ? { kind: 'unknown_device' }
        : { kind: 'invalid', detail: rejected.detail };
    }
    return { problems, result };
  }
}

/** A report problem's detail in a dialect's own field names (`latitude: …` → `lat: …`). */
export function inDialect(detail: string, names: Readonly<Record<string, string>>): string {
  return detail.replace(/(^|; )([a-z_]+):/g, (whole, lead: string, field: string) =>
    names[field] === undefined ? whole : `${lead}${names[field]}:`,
  );
}
