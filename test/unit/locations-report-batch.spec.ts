import { parseCanonicalUtc, parseIsoTimestamp } from '../../src/common/http/iso-timestamp.js';
import { filterReason, inManufacturingRegion } from '../../src/location-reports/location-rules.js';
import { nullableNumberArray, nullableTextArray } from '../../src/infrastructure/database/pg-arrays.js';
import { parseReports, reportItems } from '../../src/locations/report-batch.js';

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-03-04T10:15:30Z', Date.UTC(2026, 2, 4, 10, 15, 30)],
    ['2026-03-04T10:15:30.5Z', Date.UTC(2026, 2, 4, 10, 15, 30, 500)],
    ['2026-03-04T10:15:30.123456Z', Date.UTC(2026, 2, 4, 10, 15, 30, 123)],
    ['2026-03-04T10:15:30', Date.UTC(2026, 2, 4, 10, 15, 30)],
    ['2026-03-04 10:15', Date.UTC(2026, 2, 4, 10, 15)],
    ['2026-03-04T12:15:30+02:00', Date.UTC(2026, 2, 4, 10, 15, 30)],
    ['2026-03-04T05:15:30-0500', Date.UTC(2026, 2, 4, 10, 15, 30)],
    ['2026-03-04T11:15:30+01', Date.UTC(2026, 2, 4, 10, 15, 30)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
  ])('reads %s', (input, expected) => {
    expect(parseIsoTimestamp(input)).toBe(expected);
  });

  it.each([
    '2026-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-03-04T24:00:00Z',
    '2026-03-04T10:60:00Z',
    '2026-03-04T10:00:60Z',
    '2026-03-04T10:00:00+24:00',
    '1969-12-31T23:59:59Z',
    '2026-03-04',
    '20260304T101530Z',
    'now',
    '',
    '2026-03-04T10:00:00ZZ',
  ])('rejects %s as a date-time', (input) => {
    expect(parseIsoTimestamp(input)).toBeNull();
  });

  it('accepts a bare date only when asked, as midnight UTC', () => {
    expect(parseIsoTimestamp('2026-03-04', { allowDateOnly: true })).toBe(Date.UTC(2026, 2, 4));
    expect(parseIsoTimestamp(20260304)).toBeNull();
  });
});

describe('parseCanonicalUtc (fast path)', () => {
  it('agrees with the general parser on canonical strings and refuses everything else', () => {
    for (const ms of [0, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 21, 10, 4, 5, 123)]) {
      const iso = new Date(ms).toISOString();
      expect(parseCanonicalUtc(iso)).toBe(ms);
      expect(parseIsoTimestamp(iso)).toBe(ms);
    }
    for (const bad of [
      '2026-02-30T00:00:00.000Z',
      '2026-02-29T00:00:00.000Z',
      '2026-1a-01T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2026-01-01T00:00:00.000+',
      '2026-01-01T00:00:00Z',
      '2026-01-01 00:00:00.000Z',
    ]) {
      expect(parseCanonicalUtc(bad)).toBeNull();
    }
  });
});

describe('aggregation rules', () => {
  it('the box is inclusive on all four edges', () => {
    expect(inManufacturingRegion(18.2, 73.6)).toBe(true);
    expect(inManufacturingRegion(53.5, 134.8)).toBe(true);
    expect(inManufacturingRegion(18.19999, 100)).toBe(false);
    expect(inManufacturingRegion(30, 134.80001)).toBe(false);
  });

  it('low confidence wins over the region when both apply', () => {
    expect(filterReason({ latitude: 30, longitude: 100, confidence: 1 })).toBe('low_confidence');
    expect(filterReason({ latitude: 30, longitude: 100, confidence: 2 })).toBe('manufacturing_region');
    expect(filterReason({ latitude: 30, longitude: 10, confidence: 2 })).toBeNull();
  });
});

describe('report batches', () => {
  it('reportItems accepts {reports} and, on the tracker route, one object', () => {
    expect(reportItems({ reports: [1, 2] }, false)).toEqual([1, 2]);
    const one = { timestamp: 'x' };
    expect(reportItems(one, true)).toEqual([one]);
    expect(() => reportItems(one, false)).toThrow();
    expect(() => reportItems([one], true)).toThrow();
    expect(() => reportItems({ reports: [] }, true)).toThrow();
  });

  it('parseReports keeps request indexes and normalises timestamps to UTC milliseconds', () => {
    const now = Date.UTC(2026, 2, 4, 12);
    const out = parseReports(
      [
        { tracker_id: 1, timestamp: '2026-03-04T13:00:00+02:00', latitude: 1, longitude: 2, confidence: 2 },
        { tracker_id: 1, timestamp: '2026-03-04T12:05:00.001Z', latitude: 1, longitude: 2, confidence: 2 },
        {
          tracker_id: 2,
          timestamp: '2026-03-04T12:05:00Z',
          latitude: -90,
          longitude: 180,
          confidence: 0,
          accuracy_m: 0,
          source: '',
        },
      ],
      { now },
    );
    expect(out.index).toEqual([0, 2]);
    expect(out.timestamp).toEqual(['2026-03-04T11:00:00.000Z', '2026-03-04T12:05:00.000Z']);
    expect(out.rejected).toEqual([{ index: 1, detail: 'timestamp: must not be more than 5 minutes in the future' }]);
    expect(out.accuracyM).toEqual([null, 0]);
    expect(out.source).toEqual([null, '']);
  });

  it('array literals quote text and spell nulls', () => {
    expect(nullableTextArray(['a"b', null, 'c\\d', ''])).toBe('{"a\\"b",NULL,"c\\\\d",""}');
    expect(nullableNumberArray([1.5, null, 1e-7])).toBe('{1.5,NULL,1e-7}');
    // epoch microseconds (below 2^53) print as integers, digit strings as they are
    expect(nullableNumberArray([1_795_535_744_938_123, null, '9007199254740993'])).toBe(
      '{1795535744938123,NULL,9007199254740993}',
    );
  });
});
