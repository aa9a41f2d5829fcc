// Sums up a JEST_MEMORY_REPORT file (one JSON line per test file, see test/setup/memory-report.ts):
// the peak RSS of each Jest worker process and the test files that raised a worker's peak the most.
// Usage: node scripts/jest-memory-report.mjs <report.jsonl> [top=10]
import { readFileSync } from 'node:fs';

const [path, topArg = '10'] = process.argv.slice(2);
if (!path) {
  console.error('usage: node scripts/jest-memory-report.mjs <report.jsonl> [top=10]');
  process.exit(2);
}
const rows = readFileSync(path, 'utf8')
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line));
const mb = (kb) => `${Math.round(kb / 1024)} MB`.padStart(8);

const workers = new Map();
for (const row of rows) {
  const worker = workers.get(row.pid) ?? { pid: row.pid, files: 0, peakKb: 0 };
  worker.files += 1;
  worker.peakKb = Math.max(worker.peakKb, row.maxRssKb);
  workers.set(row.pid, worker);
}
const byPeak = [...workers.values()].sort((a, b) => b.peakKb - a.peakKb);
console.log(`${rows.length} test files in ${workers.size} worker processes`);
console.log(`highest worker peak RSS: ${mb(byPeak[0]?.peakKb ?? 0).trim()}\n`);
console.log('worker peak RSS:');
for (const worker of byPeak) console.log(`  ${mb(worker.peakKb)}  pid ${worker.pid} (${worker.files} files)`);

const top = rows
  .map((row) => ({ ...row, growthKb: row.maxRssKb - row.startMaxRssKb }))
  .sort((a, b) => b.growthKb - a.growthKb)
  .slice(0, Number(topArg));
console.log(`\ntop ${top.length} files by peak growth (worker peak before → after; heap used at the end):`);
for (const row of top) {
  console.log(
    `  +${mb(row.growthKb).trim().padStart(7)}  ${mb(row.startMaxRssKb)} → ${mb(row.maxRssKb)}  heap ${mb(row.heapUsedKb)}  ${row.file}`,
  );
}
