import type { StartRow, VisitJson } from '../../src/geofences/geofence-inputs.repository.js';
import { planStart } from '../../src/geofences/geofence-pass.js';

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
