import {
  toStatusEntryResponse,
  toTrackerDetailResponse,
  toTrackerResponse,
} from '../../src/trackers/dto/tracker.response.js';

const row = {
  id: 7,
  name: 'TRK-7',
  production_run_id: 3,
  status: 'IN_STORAGE' as const,
  storage_location_id: 2,
  delivery_location_id: null,
  notes: null,
  device_id: 'imei:356938035643809',
  created_at: new Date('2026-03-01T10:00:00Z'),
  updated_at: '2026-03-02T10:00:00.123456+00:00',
};

describe('tracker response mappers', () => {
  it('maps a row to the tracker wire shape (UTC millisecond timestamps, latest_location null by default)', () => {
    expect(toTrackerResponse(row)).toEqual({
      id: 7,
      name: 'TRK-7',
      production_run_id: 3,
      status: 'IN_STORAGE',
      storage_location_id: 2,
      delivery_location_id: null,
      notes: null,
      device_id: 'imei:356938035643809',
      created_at: '2026-03-01T10:00:00.000Z',
      updated_at: '2026-03-02T10:00:00.123Z',
      latest_location: null,
    });
  });

  it('turns bigint ids (strings from pg) into numbers in status entries', () => {
    expect(
      toStatusEntryResponse({
        id: '9007199254740',
        tracker_id: 7,
        status: 'DELIVERED',
        timestamp: '2026-03-01T10:00:00+00:00',
        storage_location_id: null,
        delivery_location_id: 4,
        notes: 'n',
        created_by: null,
        source: 'geofence',
        created_at: new Date('2026-03-01T10:00:01Z'),
      }),
    ).toEqual({
      id: 9007199254740,
      tracker_id: 7,
      status: 'DELIVERED',
      timestamp: '2026-03-01T10:00:00.000Z',
      storage_location_id: null,
      delivery_location_id: 4,
      notes: 'n',
      created_by: null,
      source: 'geofence',
      created_at: '2026-03-01T10:00:01.000Z',
    });
  });

  it('builds the detail view from JSON aggregates', () => {
    // As SQL selects points (locationPointColumns): timestamps already in the wire format.
    const point = {
      bucket: '2026-03-01T10:00:00.000Z',
      latitude: 1.5,
      longitude: 2.5,
      confidence: 3,
      reported_at: '2026-03-01T10:20:00.000Z',
      granularity: 'hourly' as const,
    };
    const detail = toTrackerDetailResponse({
      ...row,
      run_description: 'Run 3',
      run_brand_id: 5,
      run_client_id: 6,
      storage_location_name: 'Hub',
      delivery_location_name: null,
      latest_location: point,
      status_history: [],
      location_history: [point],
    });
    expect(detail).toMatchObject({
      production_run: { id: 3, description: 'Run 3', brand_id: 5, client_id: 6 },
      storage_location: { id: 2, name: 'Hub' },
      delivery_location: null,
      status_history: [],
      latest_location: {
        timestamp: '2026-03-01T10:00:00.000Z',
        reported_at: '2026-03-01T10:20:00.000Z',
        latitude: 1.5,
        longitude: 2.5,
        confidence: 3,
        granularity: 'hourly',
      },
    });
    expect(detail.location_history).toEqual([detail.latest_location]);
  });
});
