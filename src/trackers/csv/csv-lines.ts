import Papa from 'papaparse';

/** One record of a CSV file: its cells and the 1-based physical line it starts on. */
export interface CsvRecord {
  line: number;
  cells: string[];
  /** Set when the record's quoting is broken; its cells are then not read (left empty). */
  malformed?: string;
}

/** One record's raw text, without the line break that ends it. */
interface CsvLine {
  line: number;
  text: string;
  malformed?: string;
}

const enum State {
  FieldStart,
  Unquoted,
  Quoted,
  /** A `"` inside a quoted field: the closing quote, or the first half of `""`. */
  AfterQuote,
}

const CR = 13;
const LF = 10;
const QUOTE = 34;

/**
 * Cuts CSV text fed in chunks (any split, also inside a `\r\n`) into records, one per physical line
 * outside quotes: every `\r\n`, `\n` and lone `\r` outside quotes ends a record, whatever mix of
 * them a file uses; inside quotes line breaks are data. A quote opens a field only as its first
 * character. It only finds where records start and end (and broken quoting, to name its line); the
 * cells are papaparse's work.
 */
export class CsvLineSplitter {
  private state = State.FieldStart;
  /** The current record's text from earlier chunks. */
  private pending = '';
  private done: CsvLine[] = [];
  private line = 1;
  private recordLine = 1;
  private afterCR = false;
  private malformed: string | undefined;
  private readonly delimiter: number;

  constructor(delimiter: string) {
    this.delimiter = delimiter.charCodeAt(0);
  }

  /** The records this chunk completes. */
  push(text: string): CsvLine[] {
    let start = 0; // start of the current record's text in `text`
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const afterCR = this.afterCR;
      this.afterCR = c === CR;
      if (this.state === State.Quoted) {
        if (c === QUOTE) this.state = State.AfterQuote;
        else if (c === CR || (c === LF && !afterCR)) this.line++;
      } else if (c === LF && afterCR) {
        start = i + 1; // the `\n` of a `\r\n` whose `\r` already ended the record
      } else if (c === CR || c === LF) {
        this.endRecord(text.slice(start, i));
        this.line++;
        start = i + 1;
      } else if (c === this.delimiter) {
        this.state = State.FieldStart;
      } else if (c === QUOTE && this.state !== State.Unquoted) {
        this.state = State.Quoted; // an opening quote, or the second half of `""`
      } else {
        if (this.state === State.AfterQuote)
          this.malformed ??= `unexpected text after a closing quote on line ${this.line}`;
        this.state = State.Unquoted;
      }
    }
    this.pending += text.slice(start);
    return this.take();
  }

  /** End of input: the last record, also without a trailing line break. */
  end(): CsvLine[] {
    if (this.state === State.Quoted)
      this.malformed ??= `quoted field starting on line ${this.recordLine} is not closed`;
    if (this.pending !== '' || this.state !== State.FieldStart) this.endRecord('');
    return this.take();
  }

  private endRecord(tail: string): void {
    this.done.push({
      line: this.recordLine,
      text: this.pending + tail,
      ...(this.malformed ? { malformed: this.malformed } : {}),
    });
    this.pending = '';
    this.malformed = undefined;
    this.state = State.FieldStart;
    this.recordLine = this.line + 1;
  }

  private take(): CsvLine[] {
    const lines = this.done;
    this.done = [];
    return lines;
  }
}

/**
 * Reads CSV text fed in chunks as records: CsvLineSplitter finds them, papaparse splits them into
 * cells (delimiters, quotes, `""`). A well-formed record has its quotes closed and no line break
 * outside them, so the records of a chunk joined by `\n` are read by papaparse as one row each, in
 * order, and papaparse never has to pick the file's line ending. A malformed record is not given to
 * papaparse, whose recovery from broken quoting would run on into the records after it.
 */
export function csvRecordReader(
  delimiter: string,
  emit: (record: CsvRecord) => void,
): { push(text: string): void; end(): void } {
  const splitter = new CsvLineSplitter(delimiter);
  const config = { delimiter, newline: '\n' as const, quoteChar: '"', skipEmptyLines: false };
  const readEach = (texts: string[]) =>
    texts.map((text) => {
      const { data, errors } = Papa.parse<string[]>(text, config);
      return { cells: data[0] ?? [''], problem: errors[0]?.message };
    });
  const readAll = (texts: string[]) => {
    const { data, errors } = Papa.parse<string[]>(texts.join('\n'), config);
    // One row per record, except that a lone blank record reads as no row at all.
    if (data.length !== texts.length) return readEach(texts);
    const problems = new Map(errors.map((error) => [error.row, error.message] as const));
    return data.map((cells, index) => ({ cells, problem: problems.get(index) }));
  };
  const read = (lines: CsvLine[]) => {
    const rows = readAll(lines.filter((line) => line.malformed === undefined).map((line) => line.text));
    let index = 0;
    for (const { line, malformed } of lines) {
      if (malformed !== undefined) {
        emit({ line, cells: [], malformed });
        continue;
      }
      const { cells, problem } = rows[index++];
      // papaparse objecting to a record the splitter found well-formed still refuses the row
      emit({ line, cells, ...(problem === undefined ? {} : { malformed: `${problem} on line ${line}` }) });
    }
  };
  return { push: (text) => read(splitter.push(text)), end: () => read(splitter.end()) };
}
