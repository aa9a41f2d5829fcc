import type { EntryRow, ReportRow, StartRow, VisitJson } from '../../src/geofences/geofence-inputs.repository.js';
import { planStart, replayPass, Slicer, type TrackerStart } from '../../src/geofences/geofence-pass.js';
import type { Geofence } from '../../src/geofences/geofence-replay.js';

describe('geofence pass: where a tracker replay starts', () => {
  const visit = (id: string, entered: number, last: number, exited: number | null): VisitJson => [
    id,
    1,
    null,
    String(entered),
    String(last),
    exited === null ? null : String(exited),
    1,
    false,
  ];
  const row = (over: Partial<StartRow>): StartRow => ({
    tracker_id: 7,
    last_us: '1000',
    last_report_id: '55',
    resume: false,
    latest: null,
    cut_us: null,
    before: null,
    ...over,
  });

  it('resumes after the last report taken into account, with the open visit', () => {
    const open = visit('9', 900, 1000, null);
    expect(planStart(row({ resume: true, latest: open }))).toMatchObject({
      mode: 'resume',
      lowUs: '1000',
      lowId: '55',
      cutUs: '1000',
      inclusive: true,
      open,
    });
    expect(planStart(row({ resume: true, latest: visit('9', 900, 950, 1000) })).open).toBeNull();
  });

  it('rewinds to the latest visit entered at or before the change; the visit before is reopened when it was left at that time', () => {
    expect(planStart(row({ cut_us: '500', before: null }))).toMatchObject({
      mode: 'rewind',
      lowUs: '500',
      lowId: '0',
      cutUs: '500',
      inclusive: false,
      open: null,
    });
    expect(planStart(row({ cut_us: '500', before: visit('3', 100, 300, 400) }))).toMatchObject({
      mode: 'rewind',
      open: null,
    });
    const left = visit('3', 100, 300, 500);
    expect(planStart(row({ cut_us: '500', before: left }))).toMatchObject({ mode: 'rewind', open: left });
  });

  it('replays from the beginning when the stored rows do not describe the state at the cut', () => {
    // The visit before was also seen at the cut's own timestamp: its count and sighting at the cut are not known.
    expect(planStart(row({ cut_us: '500', before: visit('3', 100, 500, 500) })).mode).toBe('full');
    // No visit began at or before the change.
    expect(planStart(row({ cut_us: null })).mode).toBe('full');
  });
});

describe('geofence pass: slices', () => {
  /** A slicer whose slices are always used up: the pass pauses before every tracker and report. */
  class EveryStep extends Slicer {
    pauses = 0;
    override due(): boolean {
      return true;
    }
    override async pause(): Promise<void> {
      this.pauses++;
      await super.pause();
    }
  }

  it('pausing between any two reports ends in the same result as running the pass in one go', async () => {
    let x = 99;
    const next = () => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31), x / 2 ** 31);
    const fences: Geofence[] = Array.from({ length: 50 }, (_, i) => ({
      type: i % 3 ? 'storage' : 'delivery',
      id: i + 1,
      latitude: 10 + next() * 0.2,
      longitude: 20 + next() * 0.2,
      radiusM: 500 + Math.round(next() * 5000),
      dwellMinutes: Math.floor(next() * 20),
    }));
    const starts: TrackerStart[] = [1, 2, 3].map((trackerId) => ({
      trackerId,
      mode: 'full',
      lowUs: null,
      lowId: '0',
      cutUs: null,
      inclusive: false,
      open: null,
    }));
    const entryRows: EntryRow[] = starts.map((s) => ({
      tracker_id: s.trackerId,
      kind: 'after',
      ts: '0',
      status: 'CREATED',
      storage_location_id: null,
      delivery_location_id: null,
      source: 'manual',
      manual_us: null,
    }));
    const reportRows: ReportRow[] = Array.from({ length: 600 }, (_, i) => {
      const f = fences[Math.floor(next() * fences.length)];
      const far = next() < 0.1;
      return {
        tracker_id: 1 + (i % 3),
        id: i + 1,
        ts: 60_000_000 * (1 + Math.floor(i / 3)),
        latitude: far ? 11 : f.latitude + (next() - 0.5) * 0.01,
        longitude: far ? 21 : f.longitude + (next() - 0.5) * 0.01,
        accuracy_m: next() < 0.5 ? null : Math.round(next() * 300),
      };
    });
    const inputs = { fences, dwell: new Map(), defaultDwellMinutes: 60 };
    const once = await replayPass(starts, entryRows, reportRows, inputs, new Slicer(Infinity));
    const slicer = new EveryStep();
    const sliced = await replayPass(starts, entryRows, reportRows, inputs, slicer);
    expect(sliced).toEqual(once);
    expect(slicer.pauses).toBeGreaterThanOrEqual(reportRows.length);
    expect(once.flatMap((r) => r.entries).length).toBeGreaterThan(3);
    expect(once.flatMap((r) => r.added).filter((v) => v.confirmed).length).toBeGreaterThan(3);
  });
});
