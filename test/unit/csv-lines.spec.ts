import { csvRecordReader, type CsvRecord } from '../../src/trackers/csv/csv-lines.js';

function read(chunks: string[], delimiter = ','): CsvRecord[] {
  const records: CsvRecord[] = [];
  const reader = csvRecordReader(delimiter, (record) => records.push(record));
  for (const chunk of chunks) reader.push(chunk);
  reader.end();
  return records;
}

describe('CSV record reader (line splitter + papaparse)', () => {
  const text = 'h1,h2\r\na,"x\r\ny"\rb,"say ""hi"""\n\r\nc,\r';
  const expected: CsvRecord[] = [
    { line: 1, cells: ['h1', 'h2'] },
    { line: 2, cells: ['a', 'x\r\ny'] },
    { line: 4, cells: ['b', 'say "hi"'] },
    { line: 5, cells: [''] },
    { line: 6, cells: ['c', ''] },
  ];

  it('ends a record at every \\r\\n, \\n and lone \\r outside quotes, keeping quoted breaks as data', () => {
    expect(read([text])).toEqual(expected);
  });

  it('reads the same records whatever the chunk boundaries (also between \\r and \\n, and inside "")', () => {
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        expect([i, j, read([text.slice(0, i), text.slice(i, j), text.slice(j)])]).toEqual([i, j, expected]);
      }
    }
  });

  it('keeps quoted line breaks of every kind as written and counts each as one line', () => {
    const mixed = 'a,"1\r2\n3\r\n4"\n"5\n\r6",b\r\nc';
    for (let i = 0; i <= mixed.length; i++) {
      expect([i, read([mixed.slice(0, i), mixed.slice(i)])]).toEqual([
        i,
        [
          { line: 1, cells: ['a', '1\r2\n3\r\n4'] },
          { line: 5, cells: ['5\n\r6', 'b'] },
          { line: 8, cells: ['c'] },
        ],
      ]);
    }
  });

  it('marks broken quoting and keeps going', () => {
    expect(read(['a,"b"c\nd\n"open\r\nx'])).toEqual([
      { line: 1, cells: [], malformed: 'unexpected text after a closing quote on line 1' },
      { line: 2, cells: ['d'] },
      { line: 3, cells: [], malformed: 'quoted field starting on line 3 is not closed' },
    ]);
    expect(read(['x\n"a\nb"  ,c\n"d"e,"f\ng"\nh'])).toEqual([
      { line: 1, cells: ['x'] },
      { line: 2, cells: [], malformed: 'unexpected text after a closing quote on line 3' },
      { line: 4, cells: [], malformed: 'unexpected text after a closing quote on line 4' },
      { line: 6, cells: ['h'] },
    ]);
  });

  it('a quote inside an unquoted field is text; the delimiter is configurable', () => {
    expect(read(['a"b;c,d\n'], ';')).toEqual([{ line: 1, cells: ['a"b', 'c,d'] }]);
  });
});
