import {
  CsvFormatError,
  CsvTooManyRowsError,
  detectDelimiter,
  normalizeHeader,
  normalizeStatus,
  parseTrackerCsv,
  resolveColumns,
} from '../../src/trackers/csv/tracker-csv.js';
import { formatBytes } from '../../src/trackers/csv-upload.interceptor.js';

const parse = (text: string, maxRows?: number) => parseTrackerCsv(Buffer.from(text, 'utf8'), { maxRows });

describe('tracker CSV parsing', () => {
  it('normalizes headers ignoring case, spaces, underscores, hyphens and a BOM', () => {
    expect(normalizeHeader('\uFEFF Production_Run-ID ')).toBe('productionrunid');
    expect(
      resolveColumns([
        'Tracker Name',
        'RUN_ID',
        'current-status',
        'Delivery Location',
        'COMMENT',
        'storage location',
        'other',
      ]),
    ).toEqual({
      name: 0,
      production_run_id: 1,
      status: 2,
      delivery_location_id: 3,
      notes: 4,
      storage_location_id: 5,
    });
    expect(resolveColumns(['tracker', 'production run', 'state', 'delivery_location_id', 'note'])).toMatchObject({
      name: 0,
      production_run_id: 1,
      status: 2,
      notes: 4,
    });
    // the first of two matching columns wins
    expect(resolveColumns(['name', 'tracker_name']).name).toBe(0);
    expect(resolveColumns(['nam', 'runid2'])).toEqual({});
  });

  it.each([
    ['in transit', 'IN_TRANSIT'],
    [' In-Storage ', 'IN_STORAGE'],
    ['delivered', 'DELIVERED'],
    ['CREATED', 'CREATED'],
    ['in  transit', 'IN_TRANSIT'],
    ['transit', null],
    ['INTRANSIT', null],
  ])('status %j → %j', (input, expected) => {
    expect(normalizeStatus(input)).toBe(expected);
  });

  it('detects `;` or `,` from the header line, ignoring quoted delimiters', () => {
    expect(detectDelimiter('name;run;status')).toBe(';');
    expect(detectDelimiter('name,run')).toBe(',');
    expect(detectDelimiter('"a;b;c",name')).toBe(',');
    expect(detectDelimiter('name')).toBe(',');
  });

  it('reports 1-based file line numbers, counting blank lines and quoted line breaks', async () => {
    const { rows, errors } = await parse('name,notes\r\n\r\n"a",ok\r\n"b","two\r\nlines"\r\n,missing\r\nc,\r\n');
    expect(rows.map((r) => [r.row, r.name, r.notes])).toEqual([
      [3, 'a', 'ok'],
      [4, 'b', 'two\r\nlines'],
      [7, 'c', null],
    ]);
    expect(errors).toEqual([{ row: 6, field: 'name', message: 'is required' }]);
  });

  it('strips a BOM, trims values and defaults the status to CREATED', async () => {
    const { rows } = await parse('\uFEFFname;run_id;status\n  x  ; 7 ;\n');
    expect(rows).toEqual([
      {
        row: 2,
        name: 'x',
        productionRunId: 7,
        status: 'CREATED',
        deliveryLocationId: null,
        storageLocationId: null,
        notes: null,
        deviceId: null,
      },
    ]);
  });

  it('keeps multi-byte characters that straddle stream chunks intact', async () => {
    const name = `${'é'.repeat(40_000)}`; // 80 000 bytes: crosses the 64 KiB chunk boundary mid-character
    const { rows, errors } = await parse(`name\n${name.slice(0, 200)}\n"${'ü'.repeat(100)}"\n${'x'.repeat(70_000)}\n`);
    expect(rows[0].name).toBe('é'.repeat(200));
    expect(rows[1].name).toBe('ü'.repeat(100));
    expect(errors).toEqual([{ row: 4, field: 'name', message: 'must be at most 255 characters' }]);
  });

  it('validates ids, statuses and the location rules per row', async () => {
    const { rows, errors } = await parse(
      [
        'name,run_id,status,delivery_location,storage_location',
        'a,0,,,',
        'b,1,LOST,,',
        'c,1,IN_STORAGE,,',
        'd,1,DELIVERED,,',
        'e,1,CREATED,,3',
        'f,1,in storage,,3',
        'g,1,delivered,9,',
      ].join('\n'),
    );
    expect(errors).toEqual([
      { row: 2, field: 'production_run_id', message: 'must be a positive integer (got "0")' },
      { row: 3, field: 'status', message: 'must be one of CREATED, IN_TRANSIT, IN_STORAGE, DELIVERED (got "LOST")' },
      { row: 4, field: 'storage_location_id', message: 'is required when status is IN_STORAGE' },
      { row: 5, field: 'delivery_location_id', message: 'is required when status is DELIVERED' },
      { row: 6, field: 'storage_location_id', message: 'is only allowed when status is IN_STORAGE' },
    ]);
    expect(rows.map((r) => [r.name, r.status, r.storageLocationId, r.deliveryLocationId])).toEqual([
      ['f', 'IN_STORAGE', 3, null],
      ['g', 'DELIVERED', null, 9],
    ]);
  });

  it('reports malformed quoting as a row error', async () => {
    const { errors } = await parse('name,notes\nok,fine\n"broken,notes\n');
    expect(errors).toEqual([{ row: 3, field: 'row', message: expect.stringMatching(/^malformed CSV: /) }]);
  });

  it('rejects unusable files as a whole', async () => {
    await expect(parse('')).rejects.toThrow(new CsvFormatError('CSV file is empty'));
    await expect(parse('\n\n')).rejects.toThrow(CsvFormatError);
    await expect(parse('name\n')).rejects.toThrow('CSV file has a header but no data rows');
    await expect(parse('run_id\n1\n')).rejects.toThrow(
      'CSV header has no name column (expected one of: name, tracker_name, tracker)',
    );
    await expect(parse('x,y\n1,2\n')).rejects.toThrow(/header row is missing/);
    await expect(parseTrackerCsv(Buffer.from('name\nM\xfcller\n', 'latin1'))).rejects.toThrow(
      'CSV file is not valid UTF-8',
    );
  });

  it('stops at the first row over the limit', async () => {
    await expect(parse('name\na\nb\nc\n', 2)).rejects.toThrow(
      new CsvTooManyRowsError('Too many rows: the maximum is 2 data rows'),
    );
    await expect(parse('name\na\nb\n\n\n', 2)).resolves.toMatchObject({ rows: [{ name: 'a' }, { name: 'b' }] });
  });

  it('formats the upload limit for the 413 message', () => {
    expect(formatBytes(20 * 1024 * 1024)).toBe('20 MB');
    expect(formatBytes(1536 * 1024)).toBe('1.5 MB');
    expect(formatBytes(2048)).toBe('2 KB');
    expect(formatBytes(100)).toBe('100 bytes');
  });
});
