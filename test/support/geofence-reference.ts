/**
 * A plain, independent reading of the geofence rules for the property test: visits and automatic
 * entries from a tracker's reports and manual entries, all sorted by time. Kept deliberately
 * naive (no shared code with src/geofences) so the two can disagree.
 */

export interface RefFence {
  kind: 'storage' | 'delivery';
  id: number;
  lat: number;
  lon: number;
  radius: number;
  dwellMin: number;
}
export interface RefReport {
  ms: number;
  lat: number;
  lon: number;
  accuracy: number | null;
}
export interface RefManual {
  ms: number;
  status: string;
  storage: number | null;
}
export interface RefVisit {
  kind: 'storage' | 'delivery';
  id: number;
  entered: number;
  last: number;
  exited: number | null;
  count: number;
  confirmed: boolean;
}
export interface RefEntry {
  status: string;
  ms: number;
  storage: number | null;
  delivery: number | null;
}

function distance(aLat: number, aLon: number, bLat: number, bLon: number): number {
  const r = Math.PI / 180;
  const s =
    Math.sin(((bLat - aLat) * r) / 2) ** 2 +
    Math.cos(aLat * r) * Math.cos(bLat * r) * Math.sin(((bLon - aLon) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(s)));
}

export function referenceReplay(
  fences: RefFence[],
  reports: RefReport[],
  manual: RefManual[],
): { visits: RefVisit[]; entries: RefEntry[] } {
  type Event = { ms: number; order: number; manual?: RefManual; report?: RefReport };
  const events: Event[] = [
    ...manual.map((m) => ({ ms: m.ms, order: 0, manual: m })),
    ...reports.map((r) => ({ ms: r.ms, order: 1, report: r })),
  ];
  events.sort((a, b) => a.ms - b.ms || a.order - b.order);
  const visits: RefVisit[] = [];
  const entries: RefEntry[] = [];
  let status: string | null = null;
  let storageAt: number | null = null;
  let lastManual = -Infinity;
  let open: RefVisit | null = null;

  for (const event of events) {
    if (event.manual) {
      status = event.manual.status;
      storageAt = event.manual.storage;
      lastManual = event.ms;
      continue;
    }
    const r = event.report!;
    const rel = fences.map((f) => {
      const d = distance(r.lat, r.lon, f.lat, f.lon);
      const a = Math.min(r.accuracy ?? 0, f.radius);
      return { f, d, isIn: d <= f.radius + a, isOut: d - a > 1.1 * f.radius };
    });
    const ins = rel.filter((x) => x.isIn);
    ins.sort((x, y) => x.d - y.d || (x.f.kind === y.f.kind ? x.f.id - y.f.id : x.f.kind === 'storage' ? -1 : 1));
    const outsideAll = rel.every((x) => x.isOut);
    const begin = (f: RefFence) => {
      open = { kind: f.kind, id: f.id, entered: r.ms, last: r.ms, exited: null, count: 1, confirmed: false };
      visits.push(open);
    };
    const o = open as RefVisit | null;
    if (o === null) {
      if (ins.length) begin(ins[0].f);
    } else {
      const here = rel.find((x) => x.f.kind === o.kind && x.f.id === o.id)!;
      if (here.isIn) {
        o.last = r.ms;
        o.count += 1;
      } else if (ins.length) {
        o.exited = r.ms;
        begin(ins[0].f);
      } else if (here.isOut) {
        o.exited = r.ms;
        open = null;
      }
    }
    let justConfirmed: RefVisit | null = null;
    const v = open as RefVisit | null;
    if (v && !v.confirmed) {
      const fence = fences.find((f) => f.kind === v.kind && f.id === v.id)!;
      if (v.last - v.entered >= fence.dwellMin * 60_000) {
        v.confirmed = true;
        justConfirmed = v;
      }
    }
    if (status === null) continue;
    const add = (e: RefEntry) => {
      entries.push(e);
      status = e.status;
      storageAt = e.storage;
    };
    if (status === 'CREATED' && outsideAll) add({ status: 'IN_TRANSIT', ms: r.ms, storage: null, delivery: null });
    if (justConfirmed && justConfirmed.entered >= lastManual && status !== 'DELIVERED') {
      if (justConfirmed.kind === 'storage' && !(status === 'IN_STORAGE' && storageAt === justConfirmed.id)) {
        add({ status: 'IN_STORAGE', ms: justConfirmed.entered, storage: justConfirmed.id, delivery: null });
      }
      if (justConfirmed.kind === 'delivery')
        add({ status: 'DELIVERED', ms: justConfirmed.entered, storage: null, delivery: justConfirmed.id });
    }
    if (status === 'IN_STORAGE' && outsideAll) add({ status: 'IN_TRANSIT', ms: r.ms, storage: null, delivery: null });
  }
  return { visits, entries };
}
