/**
 * The one list of query parameters that carry credentials (stream tickets, tokens, API keys,
 * signatures of signed links, passwords). A parameter is one when its whole name, or the last word
 * of it (`access_token`, `X-Amz-Signature`, `client-secret`), is in the list, in any letter case.
 */
export const CREDENTIAL_QUERY_NAMES: ReadonlySet<string> = new Set([
  'ticket',
  'token',
  'jwt',
  'key',
  'apikey',
  'secret',
  'signature',
  'sig',
  'password',
  'passwd',
  'pwd',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'session',
]);

export const REDACTED = '[redacted]';

/**
 * Paths whose next segment is itself a credential: share links' tokens (the public tracking page
 * and its JSON view). Whoever reads a log line must not be able to open the link.
 */
export const CREDENTIAL_PATH_PREFIXES: readonly string[] = ['/track/', '/api/v1/public/track/'];

/**
 * A URL as it may be logged: the credential segment of a CREDENTIAL_PATH_PREFIXES path and the value
 * of every credential parameter of its query replaced by `[redacted]`; the rest of the path, other
 * parameters and their order unchanged. Every URL written to a log line goes through it.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  const path = redactPath(start < 0 ? url : url.slice(0, start));
  if (start < 0) return path;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return isCredential(name) ? `${name}=${REDACTED}` : pair;
    });
  return `${path}?${query.join('&')}`;
}

function redactPath(path: string): string {
  const prefix = CREDENTIAL_PATH_PREFIXES.find((p) => path.startsWith(p));
  if (prefix === undefined || path.length === prefix.length) return path;
  const end = path.indexOf('/', prefix.length);
  return `${prefix}${REDACTED}${end < 0 ? '' : path.slice(end)}`;
}

function isCredential(rawName: string): boolean {
  let name = rawName.replace(/\+/g, ' ');
  try {
    name = decodeURIComponent(name);
  } catch {
    // Not valid percent-encoding: judged as written.
  }
  name = name.trim().toLowerCase();
  if (CREDENTIAL_QUERY_NAMES.has(name)) return true;
  const words = name.split(/[^a-z0-9]+/).filter(Boolean);
  return words.length > 0 && CREDENTIAL_QUERY_NAMES.has(words[words.length - 1]);
}
