import { Injectable } from '@nestjs/common';
import { isEligible } from '../location-reports/location-rules.js';
import type { ReportRow } from './geofence-inputs.repository.js';

/** The columns of an ingest batch the inbox reads (the valid reports of the request, in request order). */
export interface BatchReports {
  trackerId: readonly number[];
  epochMs: readonly number[];
  latitude: readonly number[];
  longitude: readonly number[];
  confidence: readonly number[];
  accuracyM: readonly (number | null)[];
}

/** Numbers per held report: id, tracker id, timestamp µs, latitude, longitude, accuracy_m (NaN: none). */
const WIDTH = 6;
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
   * Holds the eligible reports a batch stored with queue row `rowId`. `known`: the batch's trackers
   * that exist and are in scope; `accepted`: how many reports it stored; `ids`: the ids of the stored
   * eligible ones, ascending. The statement inserts the known trackers' reports in (tracker, time,
   * latitude, longitude, position) order, keeps the first of equal ones, skips those already stored
   * and draws ids in insertion order; when nothing was skipped as already stored (`accepted` is the
   * number of distinct reports) the ids match the eligible distinct reports in that order. Otherwise
   * nothing is held. Answers whether the reports are held.
   */
  carry(
    rowId: string,
    batch: BatchReports,
    known: ReadonlySet<number>,
    accepted: number,
    ids: readonly number[],
  ): boolean {
    const order: number[] = [];
    for (let i = 0; i < batch.trackerId.length; i++) if (known.has(batch.trackerId[i])) order.push(i);
    const { trackerId: t, epochMs: ms, latitude: la, longitude: lo } = batch;
    order.sort((a, b) => t[a] - t[b] || ms[a] - ms[b] || la[a] - la[b] || lo[a] - lo[b] || a - b);
    const stored: number[] = [];
    for (const i of order) {
      const p = stored.at(-1);
      if (p === undefined || t[p] !== t[i] || ms[p] !== ms[i] || la[p] !== la[i] || lo[p] !== lo[i]) stored.push(i);
    }
    if (stored.length !== accepted) return false;
    const eligible = stored.filter((i) =>
      isEligible({ latitude: la[i], longitude: lo[i], confidence: batch.confidence[i] }),
    );
    if (eligible.length !== ids.length) return false;
    const reports = new Float64Array(eligible.length * WIDTH);
    for (let k = 0, o = 0; k < eligible.length; k++, o += WIDTH) {
      const i = eligible[k];
      reports[o] = ids[k];
      reports[o + 1] = t[i];
      reports[o + 2] = ms[i] * 1000;
      reports[o + 3] = la[i];
      reports[o + 4] = lo[i];
      reports[o + 5] = batch.accuracyM[i] ?? NaN;
    }
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
