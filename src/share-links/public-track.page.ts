import type { SharingConfig } from '../common/config/app-config.js';
import type { PublicTrackResponse } from './dto/public-track.response.js';
import type { PublicMapData } from './public-track.service.js';

/** Where the page's scripts and styles are served (outside the API prefix, not counted by the limit). */
export const TRACK_ASSETS_PATH = '/track-assets';

/**
 * The page's Content-Security-Policy: everything from its own origin only, no inline script or
 * style, images also from `data:` and the tile server's origins when MAP_TILE_URL is set (one per
 * subdomain its `{s}` stands for: the same list the page's tile layer is given).
 */
export function trackPagePolicy(config: SharingConfig): string {
  const images = ["'self'", 'data:', ...config.mapTileOrigins].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A UTC time for people: `2026-06-01 10:00 UTC`, in a <time> element. */
const time = (iso: string) => `<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;

const STATUS_LABELS: Record<string, string> = {
  CREATED: 'Created',
  IN_TRANSIT: 'In transit',
  IN_STORAGE: 'In storage',
  DELIVERED: 'Delivered',
};
const label = (status: string) => STATUS_LABELS[status] ?? status;

function shell(title: string, body: string, scripts = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${TRACK_ASSETS_PATH}/leaflet.css">
<link rel="stylesheet" href="${TRACK_ASSETS_PATH}/track-page.css">
</head>
<body>
${body}
${scripts}</body>
</html>
`;
}

/** The tracking page: name, status, ETA and timeline as HTML; the map drawn by the page script from the data block. */
export function trackPageHtml(view: PublicTrackResponse, map: PublicMapData, config: SharingConfig): string {
  const data = {
    view,
    route: map.route,
    places: map.places,
    tiles: config.mapTileUrl
      ? {
          url: config.mapTileUrl,
          subdomains: config.mapTileSubdomains,
          attribution: escapeHtml(config.mapTileAttribution ?? ''),
        }
      : null,
  };
  // In a data block `<` is written as \u003c, so no text in it can close the element.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const eta = view.eta
    ? `<p class="eta">Expected arrival: ${time(view.eta.expected_at)} (at the latest ${time(view.eta.latest_at)})</p>`
    : '';
  const destination = view.destination_name ? ` to ${escapeHtml(view.destination_name)}` : '';
  const timeline = [...view.status_history]
    .reverse()
    .map(
      (entry) =>
        `<li><span class="state">${label(entry.status)}</span>${time(entry.timestamp)}` +
        (entry.location_name ? `<span class="place-name">${escapeHtml(entry.location_name)}</span>` : '') +
        '</li>',
    )
    .join('\n');
  const body = `<header>
<h1>${escapeHtml(view.tracker_name)}</h1>
<p class="status">${label(view.status)}${destination}</p>
${eta}<p class="expires">This link works until ${time(view.expires_at)}.</p>
</header>
<div id="map" role="img" aria-label="Map of the route"></div>
<section>
<h2>Status history</h2>
<ol class="timeline" id="timeline">
${timeline}
</ol>
</section>
<script type="application/json" id="track-data">${json}</script>`;
  const scripts =
    `<script src="${TRACK_ASSETS_PATH}/leaflet.js"></script>\n` +
    `<script src="${TRACK_ASSETS_PATH}/track-page.js"></script>\n`;
  return shell(`${view.tracker_name} — tracking`, body, scripts);
}

/** The plain page of an unknown, expired or revoked link. */
export function notFoundPageHtml(): string {
  return shell(
    'Link not found',
    '<header>\n<h1>Link not found</h1>\n<p>This tracking link does not exist, has expired or was revoked.</p>\n</header>',
  );
}
