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
 * A URL as it may be logged: the value of every credential parameter of its query replaced by
 * `[redacted]`; path, other parameters and their order unchanged. Every URL written to a log line
 * goes through it.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return isCredential(name) ? `${name}=${REDACTED}` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
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
