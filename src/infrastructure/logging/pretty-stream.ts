/**
 * A pino destination that writes each JSON log line as one human-readable line (plus an error's
 * stack), for `npm start` in a terminal during development:
 *
 *   14:02:11.318 INFO  [NestApplication] Nest application successfully started
 *   14:02:15.004 INFO  GET /api/v1/clients 200 4 ms  reqId=3f6c…
 *   14:02:16.120 ERROR [HttpExceptionFilter] request failed with 500  path=/api/v1/users
 *       QueryFailedError 23502: null value in column "name" …
 *         at …
 */
const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '90' },
  20: { label: 'DEBUG', color: '36' },
  30: { label: 'INFO ', color: '32' },
  40: { label: 'WARN ', color: '33' },
  50: { label: 'ERROR', color: '31' },
  60: { label: 'FATAL', color: '35' },
};
/** Fields shown in the line itself (or not at all) rather than as key=value. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'context', 'req', 'res', 'responseTime', 'err']);

export interface PrettyStream {
  write(line: string): void;
}

export function createPrettyStream(out: { write(text: string): unknown }, colors: boolean): PrettyStream {
  return { write: (line: string) => void out.write(formatLine(line, colors)) };
}

export function formatLine(line: string, colors: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (code: string, text: string) => (colors ? `\u001b[${code}m${text}\u001b[0m` : text);
  const level = LEVELS[Number(entry.level)] ?? { label: String(entry.level).padEnd(5), color: '0' };
  const parts = [paint('90', clock(entry.time)), paint(level.color, level.label)];
  if (typeof entry.context === 'string') parts.push(paint('33', `[${entry.context}]`));
  const req = entry.req as { id?: unknown; method?: string; url?: string } | undefined;
  const res = entry.res as { statusCode?: number } | undefined;
  if (req?.method && res?.statusCode !== undefined) {
    parts.push(`${req.method} ${req.url ?? ''} ${res.statusCode}${typeof entry.responseTime === 'number' ? ` ${entry.responseTime} ms` : ''}`);
  } else if (entry.msg !== undefined) {
    parts.push(String(entry.msg));
  }
  const extras = Object.entries({ ...entry, reqId: entry.reqId ?? req?.id })
    .filter(([key, value]) => !SHOWN.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  let text = parts.join(' ') + (extras.length ? `  ${paint('90', extras.join(' '))}` : '');
  const err = entry.err as { type?: string; code?: string; message?: string; stack?: string } | undefined;
  if (err && typeof err === 'object') {
    const head = [err.type, err.code].filter(Boolean).join(' ');
    const stack = typeof err.stack === 'string' ? err.stack.split('\n').slice(1) : [];
    text += `\n    ${paint('31', `${head ? `${head}: ` : ''}${err.message ?? ''}`)}${stack.map((l) => `\n    ${l.trim() ? `  ${l.trim()}` : ''}`).join('')}`;
  }
  return `${text}\n`;
}

function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' ? time : Date.now());
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}
