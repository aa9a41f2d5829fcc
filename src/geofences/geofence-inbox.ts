import { Injectable } from '@nestjs/common';
import type { ReportRow } from './geofence-inputs.repository.js';

/**
 * Layout of the reports a write hands over (`carry`): one row per stored eligible report, these
 * numbers in this order, back to back in one Float64Array. `ts_us`: the report's timestamp in
 * epoch microseconds; `accuracy_m`: NaN when the report has none.
 */
export const CARRIED_REPORT_FIELDS = ['id', 'tracker_id', 'ts_us', 'latitude', 'longitude', 'accuracy_m'] as const;

/** Numbers per held report. */
const WIDTH = CARRIED_REPORT_FIELDS.length;
/** Bytes of reports held at most (older rows go first; a row that is not held is read back from the table). */
const MAX_BYTES = 64 * 1024 * 1024;
/** A row no pass of this instance took within this time (another instance took it) is let go. */
const MAX_AGE_MS = 60_000;

interface Carried {
  at: number;
  /** WIDTH numbers per report, off the JavaScript heap (cheap to hold until a pass takes it). */
  reports: Float64Array;
}

/**
 * The reports this instance's ingest just stored, held in memory under the id of the queue row
 * written with them, so that the pass taking that row need not read them back. Only a shortcut:
 * the row and the reports are durable without it, and a pass reads from the table whatever is not
 * held here (a restart, another instance's ingest or pass, an evicted row, a batch that repeated
 * stored reports). A tracker's held reports are used only when every row of the pass naming it is
 * held: then they are exactly the tracker's reports those rows mark.
 */
@Injectable()
export class GeofenceInbox {
  private readonly rows = new Map<string, Carried>();
  private size = 0;

  /**
   * Holds the eligible reports a batch stored with queue row `rowId` (CARRIED_REPORT_FIELDS rows, as
   * the batch statement returned them). A batch that skipped reports already stored (`whole`
   * false) is not held. Answers whether the reports are held.
   */
  carry(rowId: string, reports: Float64Array, whole: boolean): boolean {
    if (!whole) return false;
    this.rows.set(rowId, { at: Date.now(), reports });
    this.size += reports.byteLength;
    this.evict();
    return true;
  }

  /**
   * Lets go of the rows a pass took (`trackersOf`: the trackers each names) and answers, per
   * tracker every one of whose rows was held, the reports those rows carried.
   */
  take(rowIds: readonly string[], trackersOf: (rowId: string) => readonly number[]): Map<number, ReportRow[]> {
    const out = new Map<number, ReportRow[]>();
    const missing = new Set<number>();
    for (const rowId of rowIds) {
      const carried = this.rows.get(rowId);
      if (!carried) {
        for (const id of trackersOf(rowId)) missing.add(id);
        continue;
      }
      this.drop(rowId, carried);
      const r = carried.reports;
      for (let k = 0; k < r.length; k += WIDTH) {
        const trackerId = r[k + 1];
        const accuracy = r[k + 5];
        const row: ReportRow = {
          tracker_id: trackerId,
          id: r[k],
          ts: r[k + 2],
          latitude: r[k + 3],
          longitude: r[k + 4],
          accuracy_m: Number.isNaN(accuracy) ? null : accuracy,
        };
        const list = out.get(trackerId);
        if (list) list.push(row);
        else out.set(trackerId, [row]);
      }
    }
    for (const id of missing) out.delete(id);
    return out;
  }

  private drop(rowId: string, carried: Carried): void {
    this.rows.delete(rowId);
    this.size -= carried.reports.byteLength;
  }

  /** Oldest first (a Map iterates in insertion order). */
  private evict(): void {
    const tooOld = Date.now() - MAX_AGE_MS;
    for (const [rowId, carried] of this.rows) {
      if (this.size <= MAX_BYTES && carried.at >= tooOld) break;
      this.drop(rowId, carried);
    }
  }
}
