import { ConfigValidationError, loadConfig } from '../../src/common/config/app-config.js';
import type { PublicTrackResponse } from '../../src/share-links/dto/public-track.response.js';
import { notFoundPageHtml, trackPageHtml, trackPagePolicy } from '../../src/share-links/public-track.page.js';

/** The public tracking page's configuration, CSP and HTML (the browser test drives the real page). */
const VIEW: PublicTrackResponse = {
  tracker_name: 'Pallet </script><script>alert(1)</script> & co',
  status: 'IN_TRANSIT',
  destination_name: 'Dock "7"',
  status_history: [{ status: 'CREATED', timestamp: '2026-06-01T00:00:00.000Z', location_name: null }],
  latest_location: { latitude: 1.5, longitude: 2.5, timestamp: '2026-06-01T01:00:00.000Z' },
  eta: null,
  expires_at: '2026-06-08T00:00:00.000Z',
};
const MAP = { route: [[1, 2] as [number, number]], places: [] };

/** The data block the page script reads. */
function dataOf(html: string): { tiles: unknown; view: PublicTrackResponse } {
  const match = /<script type="application\/json" id="track-data">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error('no data block');
  return JSON.parse(match[1]);
}

describe('the public tracking page', () => {
  it('without MAP_TILE_URL: no tiles, images from itself and data: only', () => {
    const { sharing } = loadConfig({});
    expect(sharing).toMatchObject({ mapTileUrl: undefined, mapTileOrigins: [], publicRequestsPerMinute: 60 });
    const policy = trackPagePolicy(sharing);
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("img-src 'self' data:;");
    expect(policy).not.toContain('unsafe-inline');
    expect(dataOf(trackPageHtml(VIEW, MAP, sharing)).tiles).toBeNull();
  });

  it("with MAP_TILE_URL: a tile layer in the data, and the tile server's origin admitted for images", () => {
    const { sharing } = loadConfig({
      MAP_TILE_URL: 'https://tile.example.org/{z}/{x}/{y}.png',
      MAP_TILE_ATTRIBUTION: '© <Example> contributors',
    });
    expect(trackPagePolicy(sharing)).toContain("img-src 'self' data: https://tile.example.org;");
    expect(dataOf(trackPageHtml(VIEW, MAP, sharing)).tiles).toEqual({
      url: 'https://tile.example.org/{z}/{x}/{y}.png',
      subdomains: [],
      attribution: '© &lt;Example&gt; contributors',
    });
  });

  it('with `{s}` in MAP_TILE_URL: every subdomain the tile layer uses is admitted, from the same list', () => {
    const csp = (sharing: ReturnType<typeof loadConfig>['sharing']) =>
      /img-src ([^;]*);/.exec(trackPagePolicy(sharing))![1].split(' ');
    const byDefault = loadConfig({ MAP_TILE_URL: 'https://{s}.tile.example.org/{z}/{x}/{y}{r}.png' }).sharing;
    const tiles = dataOf(trackPageHtml(VIEW, MAP, byDefault)).tiles as { subdomains: string[] };
    expect(tiles.subdomains).toEqual(['a', 'b', 'c']);
    expect(csp(byDefault)).toEqual([
      "'self'",
      'data:',
      ...tiles.subdomains.map((s) => `https://${s}.tile.example.org`),
    ]);

    const own = loadConfig({
      MAP_TILE_URL: 'https://tiles-{s}.example.org:8443/{z}/{x}/{y}.png',
      MAP_TILE_SUBDOMAINS: '1, 2,3,4',
    }).sharing;
    expect((dataOf(trackPageHtml(VIEW, MAP, own)).tiles as { subdomains: string[] }).subdomains).toEqual([
      '1',
      '2',
      '3',
      '4',
    ]);
    expect(csp(own).slice(2)).toEqual([1, 2, 3, 4].map((n) => `https://tiles-${n}.example.org:8443`));
    expect(() =>
      loadConfig({ MAP_TILE_URL: 'https://{s}.t.example.org/{z}/{x}/{y}.png', MAP_TILE_SUBDOMAINS: 'a b' }),
    ).toThrow(ConfigValidationError);
    expect(() => loadConfig({ MAP_TILE_SUBDOMAINS: ',' })).toThrow(ConfigValidationError);
  });

  it('refuses a MAP_TILE_URL that is not an http(s) URL', () => {
    expect(() => loadConfig({ MAP_TILE_URL: 'javascript:alert(1)' })).toThrow(ConfigValidationError);
    expect(() => loadConfig({ MAP_TILE_URL: 'not a url' })).toThrow(ConfigValidationError);
  });

  it('shows the arrival estimate when the view has one, and no estimate line without', () => {
    const sharing = loadConfig({}).sharing;
    const eta = {
      expected_at: '2026-06-03T12:34:56.789Z',
      latest_at: '2026-06-04T08:00:00.000Z',
      basis: 'destination' as const,
      sample_size: 5,
    };
    const html = trackPageHtml({ ...VIEW, eta }, MAP, sharing);
    expect(html).toContain(
      '<p class="eta">Expected arrival: <time datetime="2026-06-03T12:34:56.789Z">2026-06-03 12:34 UTC</time> ' +
        '(at the latest <time datetime="2026-06-04T08:00:00.000Z">2026-06-04 08:00 UTC</time>)</p>',
    );
    expect(dataOf(html).view.eta).toEqual(eta);
    expect(trackPageHtml(VIEW, MAP, sharing)).not.toContain('class="eta"');
  });

  it('escapes every text: names cannot close the data block or add markup', () => {
    const html = trackPageHtml(VIEW, MAP, loadConfig({}).sharing);
    expect(html.match(/<script/g)).toHaveLength(3); // the data block, Leaflet, the page script
    expect(html).toContain('<h1>Pallet &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>');
    expect(html).toContain('In transit to Dock &quot;7&quot;');
    expect(dataOf(html).view).toEqual(VIEW);
    expect(notFoundPageHtml()).toContain('<h1>Link not found</h1>');
    expect(notFoundPageHtml()).not.toContain('<script');
  });
});
