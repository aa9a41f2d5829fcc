import { MAX_INPUT_DEPTH, TOO_DEEP } from '../../src/common/errors/input-depth.js';
import { inspectInput, MESSAGES, textProblem, verifyUtf8Json } from '../../src/common/http/text-input.js';

/** The text rule as a pure function, as CSV import and any other non-DTO input can reuse it. */
describe('textProblem', () => {
  it('single-line text refuses C0 (tab and line breaks included), DEL and C1', () => {
    for (const code of [0x00, 0x07, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f]) {
      expect(textProblem(`a${String.fromCharCode(code)}b`)).toBe(MESSAGES['single-line']);
    }
    for (const ok of ['', 'plain', 'Ünïcödé', 'emoji 😀', '\u00a0nbsp', 'x\u2028y']) expect(textProblem(ok)).toBeNull();
  });

  it('multi-line text allows tab, LF and CR in any mix, nothing else', () => {
    expect(textProblem('a\r\nb\nc\rd\te', 'multi-line')).toBeNull();
    for (const code of [0x00, 0x08, 0x0b, 0x0c, 0x0e, 0x1f, 0x7f, 0x80, 0x9f]) {
      expect(textProblem(`a${String.fromCharCode(code)}b`, 'multi-line')).toBe(MESSAGES['multi-line']);
    }
  });

  it('refuses lone surrogates, accepts pairs', () => {
    for (const bad of ['\ud800', 'a\udc00', '\ude00\ud83d'])
      expect(textProblem(bad, 'multi-line')).toBe(MESSAGES.malformed);
    expect(textProblem('\ud83d\ude00')).toBeNull();
  });
});

describe('inspectInput', () => {
  const nest = (levels: number): unknown => {
    let value: unknown = 'x';
    for (let i = 0; i < levels; i++) value = i % 2 ? { a: value } : [value];
    return value;
  };

  it(`allows ${MAX_INPUT_DEPTH} levels of objects and arrays, refuses one more`, () => {
    expect(inspectInput(nest(MAX_INPUT_DEPTH), undefined, 'body')).toEqual([]);
    expect(inspectInput(nest(MAX_INPUT_DEPTH + 1), undefined, 'body')).toEqual([{ field: 'body', message: TOO_DEEP }]);
    expect(inspectInput(nest(100_000), undefined, 'body')).toEqual([{ field: 'body', message: TOO_DEEP }]);
  });

  it('names the path of every bad string, in objects and arrays', () => {
    expect(inspectInput({ a: ['ok', 'b\u0000'], c: { d: '\u0007' } }, undefined, 'body')).toEqual([
      { field: 'a.1', message: MESSAGES['single-line'] },
      { field: 'c.d', message: MESSAGES['single-line'] },
    ]);
    expect(inspectInput('\u0000', undefined, 'id')).toEqual([{ field: 'id', message: MESSAGES['single-line'] }]);
  });
});

describe('verifyUtf8Json', () => {
  it('refuses bytes that are not UTF-8 as malformed JSON, accepts UTF-8 and other declared charsets', () => {
    expect(() => verifyUtf8Json(null, null, Buffer.from('{"a":"ü"}'), 'utf-8')).not.toThrow();
    expect(() => verifyUtf8Json(null, null, Buffer.from([0x22, 0xff, 0x22]), 'utf-8')).toThrow(
      expect.objectContaining({ status: 400, type: 'entity.parse.failed' }),
    );
    expect(() => verifyUtf8Json(null, null, Buffer.from([0x22, 0x00, 0xff, 0x00]), 'utf-16le')).not.toThrow();
  });
});
