import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files under `dir` (recursively) whose name ends with `.spec.ts`. */
function specs(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.spec.ts'))
    .map((file) => join(dir, file));
}

// jest.config.js runs each tier by name; a file named for the wrong tier would silently never run.
describe('test tiers', () => {
  it('unit tests are plain *.spec.ts (no medium or e2e suffix)', () => {
    expect(specs('test/unit').filter((file) => /\.(medium|e2e)\.spec\.ts$/.test(file))).toEqual([]);
  });

  it('medium tests are *.medium.spec.ts', () => {
    expect(specs('test/medium').filter((file) => !file.endsWith('.medium.spec.ts'))).toEqual([]);
  });

  it('e2e tests are *.e2e.spec.ts', () => {
    expect(specs('test/e2e').filter((file) => !file.endsWith('.e2e.spec.ts'))).toEqual([]);
  });

  it('no spec file lives outside the three tier directories', () => {
    const tiers = new Set(['unit', 'medium', 'e2e']);
    const stray = readdirSync('test', { withFileTypes: true }).filter(
      (entry) => entry.isDirectory() && !tiers.has(entry.name),
    );
    expect(stray.flatMap((entry) => specs(join('test', entry.name)))).toEqual([]);
    expect(readdirSync('test').filter((file) => file.endsWith('.spec.ts'))).toEqual([]);
  });
});
