import { Injectable } from '@nestjs/common';
import type { ReportRow } from './geofence-inputs.repository.js';

/** An eligible report as the ingest statement stored it: [id, tracker id, timestamp µs, latitude, longitude, accuracy_m]. */
type MarkedReport = [number, number, number, number, number, number | null];

/** Characters of JSON held at most (older rows go first; a row that is not held is read back from the table). */
const MAX_CHARS = 64 * 1024 * 1024;
/** A row no pass of this instance took within this time (another instance took it) is let go. */
const MAX_AGE_MS = 60_000;

interface Carried {
  at: number;
  /** A JSON array of MarkedReport: kept as the one string the driver received (cheap to hold until a pass takes it). */
  json: string;
}

/**
 * The reports this instance's ingest just stored, held in memory under the id of the queue row
 * written with them, so that the pass taking that row need not read them back. Only a shortcut:
 * the row and the reports are durable without it, and a pass reads from the table whatever is not
 * held here (a restart, another instance's ingest or pass, an evicted row). A tracker's held
 * reports are used only when every row of the pass naming it is held: then they are exactly the
 * tracker's reports those rows mark.
 */
@Injectable()
export class GeofenceInbox {
  private readonly rows = new Map<string, Carried>();
  private size = 0;

  /** Holds the reports stored with queue row `rowId` (`json`: a JSON array of MarkedReport). */
  carry(rowId: string, json: string): void {
    this.rows.set(rowId, { at: Date.now(), json });
    this.size += json.length;
    this.evict();
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
      for (const [id, trackerId, ts, latitude, longitude, accuracy] of JSON.parse(carried.json) as MarkedReport[]) {
        const row: ReportRow = { tracker_id: trackerId, id: String(id), ts: String(ts), latitude, longitude, accuracy_m: accuracy };
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
    this.size -= carried.json.length;
  }

  /** Oldest first (a Map iterates in insertion order). */
  private evict(): void {
    const tooOld = Date.now() - MAX_AGE_MS;
    for (const [rowId, carried] of this.rows) {
      if (this.size <= MAX_CHARS && carried.at >= tooOld) break;
      this.drop(rowId, carried);
    }
  }
}
