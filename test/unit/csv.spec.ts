import Papa from 'papaparse';
import {
  csvCell,
  csvRow,
  fileTimestamp,
  formatCsvDate,
  neutralizeFormula,
  quoteCsvField,
  safeFileNamePart,
} from '../../src/common/csv/csv.js';

describe('CSV helper', () => {
  it.each([
    ['=1+2', "'=1+2"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['a=b', 'a=b'],
    [' =x', ' =x'],
    ['', ''],
  ])('neutralizes formula-like text %p', (input, expected) => {
    expect(neutralizeFormula(input)).toBe(expected);
  });

  it('quotes only when needed and doubles embedded quotes (RFC 4180)', () => {
    expect(quoteCsvField('plain text')).toBe('plain text');
    expect(quoteCsvField('a,b')).toBe('"a,b"');
    expect(quoteCsvField('say "hi"')).toBe('"say ""hi"""');
    expect(quoteCsvField('two\nlines')).toBe('"two\nlines"');
    expect(quoteCsvField('cr\r')).toBe('"cr\r"');
  });

  it('writes numbers as they are and null/undefined as empty cells', () => {
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(0)).toBe('0');
    expect(csvCell(Number.NaN)).toBe('');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('-1.5')).toBe("'-1.5");
  });

  it('builds CRLF-terminated records that papaparse reads back to the original text', () => {
    const cells = ['=cmd|"/c calc"!A0', 'Müller, "Nord"', 'multi\r\nline', '', '@x', 'ok'];
    const line = csvRow([...cells, 42, null]);
    expect(line.endsWith('\r\n')).toBe(true);
    const parsed = Papa.parse<string[]>(line, { delimiter: ',', newline: '\r\n', skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    expect(parsed.data[0]).toEqual([
      '\'=cmd|"/c calc"!A0',
      'Müller, "Nord"',
      'multi\r\nline',
      '',
      "'@x",
      'ok',
      '42',
      '',
    ]);
  });

  describe('formatCsvDate', () => {
    const date = new Date('2026-03-01T14:05:09.987Z');
    it.each([
      ['ISO', '2026-03-01T14:05:09Z'],
      ['US', '03/01/2026 14:05:09'],
      ['EU', '01/03/2026 14:05:09'],
    ] as const)('%s', (format, expected) => {
      expect(formatCsvDate(date, format)).toBe(expected);
      expect(formatCsvDate(date.toISOString(), format)).toBe(expected);
    });

    it('is always UTC and pads every part', () => {
      expect(formatCsvDate(new Date('2026-12-31T23:59:59+01:00'), 'ISO')).toBe('2026-12-31T22:59:59Z');
      expect(formatCsvDate(new Date('2026-01-02T03:04:05Z'), 'US')).toBe('01/02/2026 03:04:05');
      expect(formatCsvDate(new Date('2026-01-02T03:04:05Z'), 'EU')).toBe('02/01/2026 03:04:05');
    });

    it('writes an empty cell for a missing date', () => {
      expect(formatCsvDate(null, 'ISO')).toBe('');
      expect(formatCsvDate(undefined, 'EU')).toBe('');
    });
  });

  it('formats file timestamps as YYYYMMDD_HHMMSS in UTC', () => {
    expect(fileTimestamp(new Date('2026-03-01T14:05:09.999Z'))).toBe('20260301_140509');
  });

  it('keeps [A-Za-z0-9_-] in file-name parts, replaces the rest and cuts to 50', () => {
    expect(safeFileNamePart('Spring batch 2026')).toBe('Spring_batch_2026');
    expect(safeFileNamePart('a/b\\c"d;e.f')).toBe('a_b_c_d_e_f');
    expect(safeFileNamePart('Ünïcødé-ok_1')).toBe('_n_c_d_-ok_1');
    expect(safeFileNamePart('x'.repeat(80))).toHaveLength(50);
    expect(safeFileNamePart('')).toBe('');
  });
});
