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
  /** The origin of mapTileUrl, admitted as an image source by the page's CSP. */
  mapTileOrigin: string | undefined;
  /** Requests per minute one client IP may make to the public JSON and page together. */
  publicRequestsPerMinute: number;
}

export function sharingConfig(r: ConfigReader): SharingConfig {
  const mapTileUrl = r.optional('MAP_TILE_URL');
  let mapTileOrigin: string | undefined;
  if (mapTileUrl !== undefined) {
    try {
      const url = new URL(mapTileUrl.replace(/\{[a-z]\}/g, 'a'));
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('protocol');
      mapTileOrigin = url.origin;
    } catch {
      r.problems.push('MAP_TILE_URL must be an http(s) URL template such as https://tile.example.org/{z}/{x}/{y}.png');
    }
  }
  return {
    mapTileUrl,
    mapTileAttribution: r.optional('MAP_TILE_ATTRIBUTION'),
    mapTileOrigin,
    publicRequestsPerMinute: r.int('PUBLIC_TRACK_REQUESTS_PER_MINUTE', 60, 1, 100_000),
  };
}
