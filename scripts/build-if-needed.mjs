// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone.
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { execSync } from 'node:child_process';

const marker = 'dist/src/main.js';
function newest(dir) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return latest;
}
const sources = Math.max(newest('src'), newest('migrations'), newest('bench'), statSync('package.json').mtimeMs);
if (!existsSync(marker) || statSync(marker).mtimeMs < sources) {
  console.log('Building…');
  execSync('npx nest build', { stdio: 'inherit' });
  // The incremental build rewrites only changed files: mark the build itself as fresh.
  const now = new Date();
  utimesSync(marker, now, now);
}
