import { nestedTooDeep, verifyJsonBody } from '../../src/common/http/request-body.js';

const arrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('nestedTooDeep', () => {
  it('allows 32 levels of arrays or objects and refuses 33, in bytes or text', () => {
    expect(nestedTooDeep(arrays(32))).toBe(false);
    expect(nestedTooDeep(arrays(33))).toBe(true);
    expect(nestedTooDeep(Buffer.from(arrays(33)))).toBe(true);
    expect(nestedTooDeep(`${'{"a":'.repeat(33)}1${'}'.repeat(33)}`)).toBe(true);
    // Depth is nesting, not the number of containers.
    expect(nestedTooDeep(`[${'[],'.repeat(1000)}[]]`)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestedTooDeep(`{"a":"${'['.repeat(100)}"}`)).toBe(false);
    expect(nestedTooDeep(`{"a":"\\"${'{'.repeat(100)}\\\\"}`)).toBe(false);
    expect(nestedTooDeep(Buffer.from(`["ü${'['.repeat(100)}"]`))).toBe(false);
  });
});

describe('verifyJsonBody', () => {
  it('scans other UTF charsets as text, and refuses one the platform cannot decode (415)', () => {
    expect(() => verifyJsonBody(null, null, Buffer.from(arrays(32), 'utf16le'), 'utf-16le')).not.toThrow();
    expect(() => verifyJsonBody(null, null, Buffer.from(arrays(33), 'utf16le'), 'utf-16le')).toThrow(
      expect.objectContaining({ status: 422, type: 'entity.too.deep' }),
    );
    expect(() => verifyJsonBody(null, null, Buffer.from([0x7b, 0, 0, 0, 0x7d, 0, 0, 0]), 'utf-32')).toThrow(
      expect.objectContaining({ status: 415, type: 'charset.unsupported' }),
    );
  });
});
