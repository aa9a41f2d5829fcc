// Opt-in memory measurement: with JEST_MEMORY_REPORT=<path>, each test file appends one JSON line
// with the worker's peak RSS before and after it (maxRSS is the process's peak so far, so the
// difference is the growth this file caused). `npm run test:memory-report -- <path>` sums it up; the
// file is appended to, so remove it before a new run.
import { appendFileSync } from 'node:fs';

const reportPath = process.env.JEST_MEMORY_REPORT;

if (reportPath) {
  const startMaxRssKb = process.resourceUsage().maxRSS;
  const startedAt = Date.now();
  afterAll(() => {
    const { testPath } = expect.getState();
    const line = {
      file: testPath ? testPath.slice(process.cwd().length + 1) : '(unknown)',
      pid: process.pid,
      startMaxRssKb,
      maxRssKb: process.resourceUsage().maxRSS,
      rssKb: Math.round(process.memoryUsage().rss / 1024),
      heapUsedKb: Math.round(process.memoryUsage().heapUsed / 1024),
      durationMs: Date.now() - startedAt,
    };
    appendFileSync(reportPath, `${JSON.stringify(line)}\n`);
  });
}
