/** One record of a CSV file: its cells and the 1-based physical line it starts on. */
export interface CsvRecord {
  line: number;
  cells: string[];
  /** Set when the record's quoting is broken; the cells are then a best effort. */
  malformed?: string;
}

const enum State {
  FieldStart,
  Unquoted,
  Quoted,
  /** A `"` inside a quoted field: either the first half of `""` or the closing quote. */
  QuoteInQuoted,
  /** After a closing quote: only a delimiter or a line break may follow. */
  AfterQuote,
}

const CR = 13;
const LF = 10;
const QUOTE = 34;

/**
 * An RFC 4180 record reader fed in chunks (any split, also inside a `\r\n`).
 *
 * Line breaks: outside quotes every `\r\n`, `\n` and lone `\r` ends a record, whatever mix of them
 * a file uses, so every physical line outside quotes is a record of its own. Inside quotes line
 * breaks are data and kept as written. A quote opens a field only as its first character; a field
 * still quoted at the end of the file, or text after a closing quote, marks the record malformed.
 */
export class CsvRecordReader {
  private state = State.FieldStart;
  private cells: string[] = [];
  private field = '';
  private line = 1;
  private recordLine = 1;
  private afterCR = false;
  private malformed: string | undefined;
  private readonly delimiter: number;

  constructor(
    delimiter: string,
    private readonly emit: (record: CsvRecord) => void,
  ) {
    this.delimiter = delimiter.charCodeAt(0);
  }

  push(text: string): void {
    let start = 0; // start of the pending run of plain field characters in `text`
    const flushRun = (end: number) => {
      if (end > start) this.field += text.slice(start, end);
    };
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      const afterCR = this.afterCR;
      this.afterCR = c === CR;
      switch (this.state) {
        case State.Quoted:
          if (c === QUOTE) {
            flushRun(i);
            this.state = State.QuoteInQuoted;
          } else if (c === CR || (c === LF && !afterCR)) {
            this.line++;
          }
          continue;
        case State.QuoteInQuoted:
          if (c === QUOTE) {
            // `""`: one literal quote; the run restarts at the second one.
            start = i;
            this.state = State.Quoted;
            continue;
          }
          this.state = State.AfterQuote;
          start = i;
          break;
        case State.FieldStart:
          if (c === LF && afterCR) {
            start = i + 1; // the `\n` of a `\r\n` whose `\r` already ended the record
            continue;
          }
          if (c === QUOTE) {
            this.state = State.Quoted;
            start = i + 1;
            continue;
          }
          this.state = State.Unquoted;
          start = i;
          break;
        default:
          break;
      }
      // Unquoted or AfterQuote: delimiters and line breaks end the field.
      if (c === this.delimiter) {
        flushRun(i);
        this.endField();
        start = i + 1;
      } else if (c === CR || c === LF) {
        flushRun(i);
        this.endRecord();
        this.line++;
        start = i + 1;
      } else if (this.state === State.AfterQuote) {
        this.malformed ??= `unexpected text after a closing quote on line ${this.line}`;
        this.state = State.Unquoted;
        start = i;
      }
    }
    if (this.state === State.Quoted || this.state === State.Unquoted || this.state === State.AfterQuote) flushRun(text.length);
  }

  /** End of input: the last record, also without a trailing line break. */
  end(): void {
    if (this.state === State.Quoted) this.malformed ??= `quoted field starting on line ${this.recordLine} is not closed`;
    if (this.state !== State.FieldStart || this.cells.length > 0) this.endRecord();
  }

  private endField(): void {
    this.cells.push(this.field);
    this.field = '';
    this.state = State.FieldStart;
  }

  private endRecord(): void {
    this.endField();
    this.emit({ line: this.recordLine, cells: this.cells, ...(this.malformed ? { malformed: this.malformed } : {}) });
    this.cells = [];
    this.malformed = undefined;
    this.recordLine = this.line + (this.state === State.FieldStart ? 1 : 0);
  }
}
