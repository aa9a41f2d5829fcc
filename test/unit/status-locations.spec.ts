import { RequestValidationException } from '../../src/common/errors/validation.exception.js';
import { TRACKER_STATES, type TrackerStatus } from '../../src/tracker-states/tracker-status.js';
import { assertStatusLocations, DELIVERY_REQUIRED } from '../../src/trackers/status-locations.js';

/** The field errors assertStatusLocations raises, or [] when the entry is accepted. */
function problems(
  status: TrackerStatus,
  storageLocationId: number | null,
  deliveryLocationId: number | null,
  deliveryMissing?: string,
) {
  try {
    assertStatusLocations(status, { storageLocationId, deliveryLocationId }, deliveryMissing);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(RequestValidationException);
    return (error as RequestValidationException).errors;
  }
}

describe('status entry locations (assertStatusLocations)', () => {
  it('accepts exactly one shape per status', () => {
    expect(problems('CREATED', null, null)).toEqual([]);
    expect(problems('IN_TRANSIT', null, null)).toEqual([]);
    expect(problems('IN_STORAGE', 4, null)).toEqual([]);
    expect(problems('DELIVERED', null, 9)).toEqual([]);
  });

  it('requires the location that belongs to the status', () => {
    expect(problems('IN_STORAGE', null, null)).toEqual([
      { field: 'storage_location_id', message: 'is required when status is IN_STORAGE' },
    ]);
    expect(problems('DELIVERED', null, null)).toEqual([{ field: 'delivery_location_id', message: DELIVERY_REQUIRED }]);
    expect(DELIVERY_REQUIRED).toBe('is required when status is DELIVERED');
  });

  it('refuses a storage location on any status but IN_STORAGE', () => {
    for (const status of TRACKER_STATES.filter((s) => s !== 'IN_STORAGE')) {
      expect(problems(status, 4, status === 'DELIVERED' ? 9 : null)).toEqual([
        { field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' },
      ]);
    }
  });

  it('refuses a delivery location on any status but DELIVERED', () => {
    for (const status of TRACKER_STATES.filter((s) => s !== 'DELIVERED')) {
      expect(problems(status, status === 'IN_STORAGE' ? 4 : null, 9)).toEqual([
        { field: 'delivery_location_id', message: 'is only allowed when status is DELIVERED' },
      ]);
    }
  });

  it('reports the storage problem first when both locations are wrong', () => {
    expect(problems('IN_STORAGE', null, 9)).toEqual([
      { field: 'storage_location_id', message: 'is required when status is IN_STORAGE' },
    ]);
    expect(problems('DELIVERED', 4, null)).toEqual([
      { field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' },
    ]);
    expect(problems('CREATED', 4, 9)).toEqual([
      { field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' },
    ]);
  });

  it('a caller that falls back to the destination words the missing delivery location itself', () => {
    const message = 'is required when status is DELIVERED and the tracker has no destination';
    expect(problems('DELIVERED', null, null, message)).toEqual([{ field: 'delivery_location_id', message }]);
    expect(problems('DELIVERED', null, 9, message)).toEqual([]);
  });

  it('the exception carries the 422 body shape with a detail naming the field', () => {
    let thrown: unknown;
    try {
      assertStatusLocations('IN_STORAGE', { storageLocationId: null, deliveryLocationId: null });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RequestValidationException);
    expect((thrown as RequestValidationException).getStatus()).toBe(422);
    expect((thrown as RequestValidationException).getResponse()).toEqual({
      detail: 'Validation failed: storage_location_id: is required when status is IN_STORAGE',
      errors: [{ field: 'storage_location_id', message: 'is required when status is IN_STORAGE' }],
    });
  });
});
