import { nestedTooDeep } from '../../src/common/http/request-body.js';

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
