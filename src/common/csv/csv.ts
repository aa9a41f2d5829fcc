/**
 * CSV writing helpers (RFC 4180) shared by every CSV export.
 *
 * - Records end with CRLF, as RFC 4180 specifies.
 * - A field is quoted when it holds a comma, a double quote, CR or LF; quotes inside are doubled.
 * - Text cells that a spreadsheet would evaluate as a formula (first character `=`, `+`, `-`, `@`,
 *   tab or CR) get a leading `'` (OWASP "CSV injection"). Numbers are written as they are: they
 *   are produced by the service, never by a user, and `-1` must stay a number.
 */

export const CSV_LINE_END = '\r\n';

/** A cell: text (neutralised and quoted as needed), a number (as is) or empty. */
type CsvCell = string | number | null | undefined;

const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);
const NEEDS_QUOTES = /[",\r\n]/;

/** Prefixes `'` to text a spreadsheet would otherwise run as a formula. */
export function neutralizeFormula(text: string): string {
  return text.length > 0 && FORMULA_TRIGGERS.has(text[0]) ? `'${text}` : text;
}

/** RFC 4180 quoting of one already-neutralised field. */
export function quoteCsvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  return quoteCsvField(neutralizeFormula(value));
}

/** One record including its line end. */
export function csvRow(cells: readonly CsvCell[]): string {
  return cells.map(csvCell).join(',') + CSV_LINE_END;
}

export const CSV_DATE_FORMATS = ['ISO', 'US', 'EU'] as const;
export type CsvDateFormat = (typeof CSV_DATE_FORMATS)[number];

/**
 * Date-times in CSV exports, always UTC and to the second:
 * ISO `2026-03-01T14:05:00Z`, US `03/01/2026 14:05:00`, EU `01/03/2026 14:05:00`. Null → ''.
 */
export function formatCsvDate(date: Date | string | null | undefined, format: CsvDateFormat): string {
  if (date === null || date === undefined) return '';
  const d = new Date(date);
  const yyyy = String(d.getUTCFullYear()).padStart(4, '0');
  const mm = pad2(d.getUTCMonth() + 1);
  const dd = pad2(d.getUTCDate());
  const time = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  switch (format) {
    case 'ISO':
      return `${yyyy}-${mm}-${dd}T${time}Z`;
    case 'US':
      return `${mm}/${dd}/${yyyy} ${time}`;
    case 'EU':
      return `${dd}/${mm}/${yyyy} ${time}`;
  }
}

/** `YYYYMMDD_HHMMSS` (UTC), for file names. */
export function fileTimestamp(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** A file-name fragment: keeps `[A-Za-z0-9_-]`, every other character becomes `_`, cut to `max`. */
export function safeFileNamePart(text: string, max = 50): string {
  return Array.from(text, (ch) => (/^[A-Za-z0-9_-]$/.test(ch) ? ch : '_'))
    .join('')
    .slice(0, max);
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}
