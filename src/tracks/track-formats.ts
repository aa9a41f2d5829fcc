import type { KeptPoints } from './track-simplifier.js';

export const TRACK_FORMATS = ['geojson', 'gpx', 'kml'] as const;
export type TrackFormat = (typeof TRACK_FORMATS)[number];

export const TRACK_CONTENT_TYPES: Record<TrackFormat, string> = {
  geojson: 'application/geo+json',
  gpx: 'application/gpx+xml',
  kml: 'application/vnd.google-earth.kml+xml',
};

export type LocationType = 'storage' | 'delivery';

/** A status entry of the window that names a location with coordinates, drawn at that location. */
export interface StatusMarker {
  status: string;
  timestamp: string;
  location_type: LocationType;
  location_name: string;
  latitude: number;
  longitude: number;
}

/** A visit overlapping the window, drawn at its location. */
export interface VisitMarker {
  location_type: LocationType;
  location_name: string;
  entered_at: string;
  exited_at: string | null;
  confirmed: boolean;
  latitude: number;
  longitude: number;
}

/** Everything a track answer shows; `points` holds at most `max_points` entries. */
export interface TrackDocument {
  trackerId: number;
  trackerName: string;
  sourcePointCount: number;
  points: KeptPoints;
  statuses: StatusMarker[];
  visits: VisitMarker[];
}

/** Points written per chunk of text. */
const CHUNK_POINTS = 2000;

const iso = (ms: number) => new Date(ms).toISOString();

/** A coordinate in plain decimal notation (XML's xsd:decimal has no exponent; JSON is fine either way). */
export function decimal(value: number): string {
  const text = String(value);
  return text.includes('e') ? value.toFixed(15).replace(/\.?0+$/, '') : text;
}

/** The document as text chunks in `format` (a generator: the consumer's pace decides the memory). */
export function trackText(format: TrackFormat, doc: TrackDocument): Generator<string> {
  if (format === 'gpx') return gpxText(doc);
  if (format === 'kml') return kmlText(doc);
  return geoJsonText(doc);
}

/** `[from, to)` ranges of CHUNK_POINTS over `count` points. */
function* chunks(count: number): Generator<[number, number]> {
  for (let from = 0; from < count; from += CHUNK_POINTS) yield [from, Math.min(count, from + CHUNK_POINTS)];
}

function* geoJsonText(doc: TrackDocument): Generator<string> {
  const { longitude, latitude, time } = doc.points;
  const count = time.length;
  yield '{"type":"FeatureCollection","features":[{"type":"Feature","geometry":';
  if (count < 2) yield 'null';
  else {
    yield '{"type":"LineString","coordinates":[';
    for (const [from, to] of chunks(count)) {
      const parts: string[] = [];
      for (let i = from; i < to; i += 1) parts.push(`[${decimal(longitude[i])},${decimal(latitude[i])}]`);
      yield (from > 0 ? ',' : '') + parts.join(',');
    }
    yield ']}';
  }
  const header = {
    tracker_id: doc.trackerId,
    tracker_name: doc.trackerName,
    point_count: count,
    source_point_count: doc.sourcePointCount,
    start: count > 0 ? iso(time[0]) : null,
    end: count > 0 ? iso(time[count - 1]) : null,
  };
  yield `,"properties":${JSON.stringify(header).slice(0, -1)},"timestamps":[`;
  for (const [from, to] of chunks(count)) {
    const parts: string[] = [];
    for (let i = from; i < to; i += 1) parts.push(`"${iso(time[i])}"`);
    yield (from > 0 ? ',' : '') + parts.join(',');
  }
  yield ']}}';
  for (const marker of doc.statuses) {
    const { latitude: lat, longitude: lon, ...properties } = marker;
    yield `,${JSON.stringify(pointFeature(lon, lat, { kind: 'status', ...properties }))}`;
  }
  for (const marker of doc.visits) {
    const { latitude: lat, longitude: lon, ...properties } = marker;
    yield `,${JSON.stringify(pointFeature(lon, lat, { kind: 'visit', ...properties }))}`;
  }
  yield ']}';
}

function pointFeature(longitude: number, latitude: number, properties: object) {
  return { type: 'Feature', geometry: { type: 'Point', coordinates: [longitude, latitude] }, properties };
}

/** Text for XML content and attribute values. */
export function xmlEscape(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const statusName = (marker: StatusMarker) => `${marker.status} — ${marker.location_name}`;
const visitName = (marker: VisitMarker) => `Visit — ${marker.location_name}`;

function* gpxText(doc: TrackDocument): Generator<string> {
  const { longitude, latitude, time } = doc.points;
  const name = xmlEscape(doc.trackerName);
  yield (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<gpx version="1.1" creator="Tracker Pipeline Service" xmlns="http://www.topografix.com/GPX/1/1">\n' +
    `<metadata><name>${name}</name></metadata>\n`
  );
  for (const m of doc.statuses)
    yield (
      `<wpt lat="${decimal(m.latitude)}" lon="${decimal(m.longitude)}"><time>${m.timestamp}</time>` +
      `<name>${xmlEscape(statusName(m))}</name><type>${xmlEscape(m.status)}</type></wpt>\n`
    );
  yield `<trk><name>${name}</name><trkseg>\n`;
  for (const [from, to] of chunks(time.length)) {
    let text = '';
    for (let i = from; i < to; i += 1)
      text += `<trkpt lat="${decimal(latitude[i])}" lon="${decimal(longitude[i])}"><time>${iso(time[i])}</time></trkpt>\n`;
    yield text;
  }
  yield '</trkseg></trk>\n</gpx>\n';
}

function* kmlText(doc: TrackDocument): Generator<string> {
  const { longitude, latitude, time } = doc.points;
  const name = xmlEscape(doc.trackerName);
  yield (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2">\n' +
    `<Document><name>${name}</name>\n<Placemark><name>${name}</name><gx:Track>\n`
  );
  // gx:Track lists every <when> first, then the <gx:coord> of each in the same order.
  for (const [from, to] of chunks(time.length)) {
    let text = '';
    for (let i = from; i < to; i += 1) text += `<when>${iso(time[i])}</when>\n`;
    yield text;
  }
  for (const [from, to] of chunks(time.length)) {
    let text = '';
    for (let i = from; i < to; i += 1)
      text += `<gx:coord>${decimal(longitude[i])} ${decimal(latitude[i])} 0</gx:coord>\n`;
    yield text;
  }
  yield '</gx:Track></Placemark>\n';
  for (const m of doc.statuses)
    yield placemark(statusName(m), m.timestamp, m.longitude, m.latitude, `status ${m.status}`);
  for (const m of doc.visits)
    yield placemark(
      visitName(m),
      m.entered_at,
      m.longitude,
      m.latitude,
      `visit from ${m.entered_at} to ${m.exited_at ?? 'now'}${m.confirmed ? ', confirmed' : ''}`,
    );
  yield '</Document>\n</kml>\n';
}

function placemark(name: string, when: string, longitude: number, latitude: number, description: string): string {
  return (
    `<Placemark><name>${xmlEscape(name)}</name><description>${xmlEscape(description)}</description>` +
    `<TimeStamp><when>${when}</when></TimeStamp><Point><coordinates>${decimal(longitude)},${decimal(latitude)}</coordinates></Point></Placemark>\n`
  );
}
