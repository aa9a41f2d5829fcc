import { validateRow, type CsvField, type CsvRowError } from '../../src/trackers/csv/tracker-row.js';

const COLUMNS: Partial<Record<CsvField, number>> = {
  name: 0,
  production_run_id: 1,
  status: 2,
  delivery_location_id: 3,
  storage_location_id: 4,
  notes: 5,
  device_id: 6,
};

/** validateRow on one row (line 7) with every column present; cells default to a valid CREATED row. */
function check(cells: Partial<Record<CsvField, string>>, columns = COLUMNS) {
  const fields = ['name', 'production_run_id', 'status', 'delivery_location_id', 'storage_location_id', 'notes'];
  const row = [...fields, 'device_id'].map(
    (field) => cells[field as CsvField] ?? { name: 'TRK-1', production_run_id: '3' }[field] ?? '',
  );
  const errors: CsvRowError[] = [];
  const result = validateRow(7, row, columns, errors);
  return { result, errors };
}

// The row rules of the CSV import, through the public per-row function (the parser around it is
// covered in csv-import.spec.ts).
describe('CSV row validation (validateRow)', () => {
  it('turns a valid row into a tracker row, trimming cells and defaulting the status', () => {
    expect(
      check({
        name: '  TRK-1 ',
        production_run_id: ' 3 ',
        delivery_location_id: '9',
        notes: ' fragile ',
        device_id: ' imei:1 ',
      }),
    ).toEqual({
      result: {
        row: 7,
        name: 'TRK-1',
        productionRunId: 3,
        status: 'CREATED',
        deliveryLocationId: 9,
        storageLocationId: null,
        notes: 'fragile',
        deviceId: 'imei:1',
      },
      errors: [],
    });
  });

  it('appends its problems to the list it is given and returns null', () => {
    const errors: CsvRowError[] = [{ row: 2, field: 'name', message: 'is required' }];
    expect(validateRow(7, ['', '3'], { name: 0, production_run_id: 1 }, errors)).toBeNull();
    expect(errors).toEqual([
      { row: 2, field: 'name', message: 'is required' },
      { row: 7, field: 'name', message: 'is required' },
    ]);
  });

  it('a missing run column is allowed (the run may come from the query)', () => {
    expect(validateRow(2, ['x'], { name: 0 }, [])).toMatchObject({
      name: 'x',
      productionRunId: null,
      status: 'CREATED',
    });
  });

  it('ids are positive int4 integers written as digits', () => {
    expect(check({ production_run_id: '2147483647' }).result).toMatchObject({ productionRunId: 2147483647 });
    for (const value of ['0', '2147483648', '-1', '1.5', '1e3', 'abc', '12345678901']) {
      expect(check({ production_run_id: value })).toEqual({
        result: null,
        errors: [{ row: 7, field: 'production_run_id', message: `must be a positive integer (got "${value}")` }],
      });
    }
  });

  it('quotes at most 50 characters of a bad value', () => {
    const value = '9'.repeat(80);
    expect(check({ storage_location_id: value }).errors).toEqual([
      { row: 7, field: 'storage_location_id', message: `must be a positive integer (got "${value.slice(0, 50)}")` },
    ]);
  });

  it('accepts the status spellings of the import and refuses others', () => {
    expect(check({ status: 'in-transit' }).result).toMatchObject({ status: 'IN_TRANSIT' });
    expect(check({ status: 'In Storage', storage_location_id: '4' }).result).toMatchObject({
      status: 'IN_STORAGE',
      storageLocationId: 4,
    });
    expect(check({ status: 'shipped' }).errors).toEqual([
      { row: 7, field: 'status', message: 'must be one of CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED (got "shipped")' },
    ]);
  });

  it('applies the status/location rule: storage only for IN_STORAGE, a delivery location required for DELIVERED', () => {
    expect(check({ status: 'IN_STORAGE' }).errors).toEqual([
      { row: 7, field: 'storage_location_id', message: 'is required when status is IN_STORAGE' },
    ]);
    expect(check({ status: 'IN_TRANSIT', storage_location_id: '4' }).errors).toEqual([
      { row: 7, field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' },
    ]);
    expect(check({ status: 'DELIVERED' }).errors).toEqual([
      { row: 7, field: 'delivery_location_id', message: 'is required when status is DELIVERED' },
    ]);
    expect(check({ status: 'DELIVERED', delivery_location_id: '9' }).result).toMatchObject({
      status: 'DELIVERED',
      deliveryLocationId: 9,
    });
  });

  it('notes may span lines; every other column is single-line text', () => {
    expect(check({ notes: 'line 1\nline 2\tend' }).result).toMatchObject({ notes: 'line 1\nline 2\tend' });
    expect(check({ name: 'a\nb' }).errors).toEqual([
      { row: 7, field: 'name', message: 'must not contain control characters' },
    ]);
    expect(check({ notes: 'bell\u0007' }).errors).toEqual([
      { row: 7, field: 'notes', message: 'must not contain control characters other than tab and line breaks' },
    ]);
    expect(check({ name: 'half \uD800' }).errors).toEqual([
      { row: 7, field: 'name', message: 'must be valid Unicode text (no lone surrogates)' },
    ]);
  });

  it('obeys the length limits of POST /trackers', () => {
    expect(check({ name: 'n'.repeat(255) }).result).toMatchObject({ name: 'n'.repeat(255) });
    expect(check({ name: 'n'.repeat(256) }).errors).toEqual([
      { row: 7, field: 'name', message: 'must be at most 255 characters' },
    ]);
    expect(check({ notes: 'x'.repeat(10_000) }).result).not.toBeNull();
    expect(check({ notes: 'x'.repeat(10_001) })).toMatchObject({ result: null, errors: [{ row: 7, field: 'notes' }] });
  });

  it('reports every problem of a row, not just the first', () => {
    expect(check({ name: '', production_run_id: 'x', status: 'IN_STORAGE' }).errors.map((e) => e.field)).toEqual([
      'name',
      'production_run_id',
      'storage_location_id',
    ]);
  });
});
