import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Longest accepted target URL. */
export const MAX_URL_LENGTH = 2000;
/** A host name that does not resolve within this long is refused at creation. */
const RESOLVE_TIMEOUT_MS = 5000;

export interface TargetRules {
  /** Only https:// (production). */
  requireHttps: boolean;
  /** Refuse hosts that are or resolve to a non-public address (production unless WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  refusePrivateTargets: boolean;
}

/** What is wrong with `text` as a webhook URL (its form only, no DNS), or null. */
export function urlProblem(text: string, rules: TargetRules): string | null {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (/\s/.test(text)) return 'must not contain white space';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL (https://host/path)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http:// or https:// URL';
  if (rules.requireHttps && url.protocol !== 'https:')
    return 'must be an https:// URL (http:// is accepted only outside production)';
  // The parser drops an empty user part, so `@` before the host is checked on the text itself too.
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(text))
    return 'must not contain credentials (user@ or user:pass@)';
  if (url.hostname === '') return 'must name a host';
  return null;
}

/** The host of a URL as DNS and the address rules read it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Whether a delivery may connect to `address`: only globally routable unicast addresses. ipaddr.js
 * names the special ranges (loopback, private, link-local, unspecified, carrier-grade NAT,
 * multicast, reserved, unique local, …) and unwraps IPv4-mapped IPv6 (`::ffff:127.0.0.1`).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

const NOT_PUBLIC = 'a loopback, private, link-local or unspecified address';
const refusal = (host: string, address: string) => `${NOT_PUBLIC} (${host} is or resolves to ${address})`;

/** Why the target's host may not be used under `rules` (DNS resolved now), or null. */
export async function hostProblem(url: URL, rules: TargetRules): Promise<string | null> {
  if (!rules.refusePrivateTargets) return null;
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      const resolved = await Promise.race([
        lookup(host, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), RESOLVE_TIMEOUT_MS))),
      ]);
      addresses = resolved.map((entry) => entry.address);
    } catch {
      return `host ${host} does not resolve`;
    } finally {
      clearTimeout(timer);
    }
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  return refused === undefined ? null : `must not target ${refusal(host, refused)}`;
}

/** A delivery refused because of its target's address (not retried differently: DNS may change). */
export class RefusedTarget extends Error {}

/**
 * The DNS lookup of a delivery's connection when private targets are refused: resolves, refuses the
 * whole host when any address is not public, and hands the checked addresses to the socket, which
 * connects to exactly those — no second resolution, so no rebinding between check and connect.
 * (An IP literal is never looked up: the sender checks it before connecting.)
 */
export const guardedLookup: LookupFunction = (hostname, options: LookupOptions, callback) => {
  lookupCallback(hostname, { ...options, all: true, verbatim: true }, (error, entries: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = entries.find((entry) => !isPublicAddress(entry.address));
    if (refused) return callback(new RefusedTarget(`refused: ${refusal(hostname, refused.address)}`), '', 0);
    if (entries.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
    if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, entries);
    callback(null, entries[0].address, entries[0].family);
  });
};
