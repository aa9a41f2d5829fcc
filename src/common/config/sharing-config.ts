/** The part of the configuration reader sharingConfig uses (app-config.ts's Reader). */
interface ConfigReader {
  readonly problems: string[];
  optional(name: string): string | undefined;
  int(name: string, fallback: number, min: number, max: number): number;
}

export interface SharingConfig {
  /** Tile URL template of the public tracking page's map (`{z}`, `{x}`, `{y}`, `{s}`); unset: no tiles. */
  mapTileUrl: string | undefined;
  /** Attribution shown under the tiles (MAP_TILE_ATTRIBUTION, plain text; most tile servers require one). */
  mapTileAttribution: string | undefined;
  /**
   * What `{s}` in mapTileUrl becomes (MAP_TILE_SUBDOMAINS, default a, b, c): handed to the page's
   * tile layer as its `subdomains`, and the source of mapTileOrigins, so the CSP admits exactly the
   * hosts the map fetches from. Empty when the URL has no `{s}`.
   */
  mapTileSubdomains: string[];
  /** The origins of mapTileUrl (one per subdomain), admitted as image sources by the page's CSP. */
  mapTileOrigins: string[];
  /** Requests per minute one client IP may make to the public JSON and page together. */
  publicRequestsPerMinute: number;
}

const DEFAULT_SUBDOMAINS = 'a,b,c';
/** A host name label: what a subdomain must be to stand in for `{s}`. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

export function sharingConfig(r: ConfigReader): SharingConfig {
  const mapTileUrl = r.optional('MAP_TILE_URL');
  const subdomains = (r.optional('MAP_TILE_SUBDOMAINS') ?? DEFAULT_SUBDOMAINS)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (subdomains.length === 0 || !subdomains.every((s) => LABEL.test(s)))
    r.problems.push('MAP_TILE_SUBDOMAINS must be a comma list of host name labels such as a,b,c');
  const mapTileSubdomains = mapTileUrl?.includes('{s}') ? subdomains : [];
  const mapTileOrigins = new Set<string>();
  if (mapTileUrl !== undefined) {
    try {
      for (const s of mapTileSubdomains.length > 0 ? mapTileSubdomains : ['a']) {
        // Other placeholders sit in the path (or stand for one value), so any letter keeps the origin.
        const url = new URL(mapTileUrl.replaceAll('{s}', s).replace(/\{[a-z]\}/g, 'a'));
        if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('protocol');
        mapTileOrigins.add(url.origin);
      }
    } catch {
      mapTileOrigins.clear();
      r.problems.push('MAP_TILE_URL must be an http(s) URL template such as https://tile.example.org/{z}/{x}/{y}.png');
    }
  }
  return {
    mapTileUrl,
    mapTileAttribution: r.optional('MAP_TILE_ATTRIBUTION'),
    mapTileSubdomains,
    mapTileOrigins: [...mapTileOrigins],
    publicRequestsPerMinute: r.int('PUBLIC_TRACK_REQUESTS_PER_MINUTE', 60, 1, 100_000),
  };
}
