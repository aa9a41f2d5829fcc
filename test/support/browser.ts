import { existsSync } from 'node:fs';

/** The browser the real-browser tests drive through playwright-core: Debian's chromium (no download). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `describe` for a real-browser test file. Without the browser a developer's run skips the file
 * with a warning; under CI (`CI=true`, which `.ci/run` sets and which installs chromium) a missing
 * browser fails the file instead, so a broken install can never pass as "all green".
 */
export function describeWithBrowser(): typeof describe {
  if (existsSync(CHROMIUM)) return describe;
  if (process.env.CI === 'true')
    throw new Error(`${CHROMIUM} not found under CI: the browser tests cannot run (apt-get install chromium)`);
  console.warn(`[tests] ${CHROMIUM} not found: browser tests skipped (apt-get install chromium)`);
  return describe.skip;
}
