import { createHash } from 'node:crypto';
import { stdSerializers } from 'pino';

/**
 * The `err` serializer of every log line: pino's own, minus what a database error carries about the
 * data. A failed statement's parameters (a new user's password hash, say) and PostgreSQL's `detail`
 * (which quotes the failing row or key) never reach a log. What stays identifies the failure: the
 * SQLSTATE (`code`), the message, the constraint/table/column, and the statement — by name and its
 * first words, never its values.
 */
export function serializeError(error: unknown): unknown {
  // pino-http hands over errors already through pino's serializer; a direct call passes the error.
  const serialized = error instanceof Error ? (stdSerializers.err(error) as unknown) : error;
  return scrub(serialized, 0);
}

/** Keys that carry a statement's data, wherever they appear in an error. */
const DATA_KEYS = new Set([
  'parameters',
  'params',
  'values',
  'detail',
  'where',
  'internalQuery',
  'internalPosition',
  'position',
  'driverError',
  'raw',
]);
/** What a database error (pg's DatabaseError, TypeORM's QueryFailedError) keeps. */
const DATABASE_ERROR_KEYS = new Set([
  'type',
  'message',
  'stack',
  'code',
  'severity',
  'routine',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'statement',
  'operation',
]);

function scrub(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  const source = value as Record<string, unknown>;
  const driver = (source.driverError ?? {}) as Record<string, unknown>;
  const query = typeof source.query === 'string' ? source.query : undefined;
  const database = query !== undefined || 'parameters' in source || isPostgresError(source) || isPostgresError(driver);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) {
    if (key === 'query' || DATA_KEYS.has(key)) continue;
    if (database && !DATABASE_ERROR_KEYS.has(key)) continue;
    out[key] = scrub(item, depth + 1);
  }
  if (database) {
    // TypeORM's QueryFailedError copies the driver's fields; take them from the driver when it did not.
    for (const key of ['code', 'severity', 'routine', 'table', 'column', 'constraint'] as const) {
      if (out[key] === undefined && driver[key] !== undefined) out[key] = driver[key];
    }
    if (query !== undefined) Object.assign(out, describeStatement(query));
  }
  return out;
}

/** pg's DatabaseError: a SQLSTATE and the severity PostgreSQL reported. */
function isPostgresError(error: Record<string, unknown>): boolean {
  return typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code) && typeof error.severity === 'string';
}

/**
 * Names a statement without its values: `statement` is the name the service gives a prepared
 * statement of that text (q_ + 20 hex digits of its SHA-1), `operation` its first words (quoted
 * literals and numbers removed), e.g. `INSERT INTO "users"`.
 */
export function describeStatement(sql: string): { statement: string; operation: string } {
  const statement = `q_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
  const operation = sql
    .replace(/'(?:[^']|'')*'/g, '?')
    .replace(/\$\$[\s\S]*?\$\$/g, '?')
    .replace(/\b\d+(\.\d+)?\b/g, '?')
    .replace(/\s+/g, ' ')
    .trim()
    .split(/[(,]/)[0]
    .slice(0, 60)
    .trim();
  return { statement, operation };
}
