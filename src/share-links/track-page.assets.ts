/**
 * The public tracking page's own script and style, served by the service (`/track-assets/…`, beside
 * Leaflet's files) so the page's CSP can admit scripts and styles from its own origin only. The
 * script reads the page's data block (JSON, never executed) and draws the route and places with
 * Leaflet: on a plain background with a scale, and on tiles only when the data names a tile URL.
 * The route is drawn with every vertex (no smoothing or clipping): what the page shows is the
 * route the service simplified.
 */
export const TRACK_PAGE_SCRIPT = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('track-data').textContent);
  var element = document.getElementById('map');
  var latest = data.view.latest_location;
  if (data.route.length === 0 && data.places.length === 0 && !latest) {
    element.hidden = true;
    return;
  }
  var map = L.map(element, { attributionControl: Boolean(data.tiles) });
  if (data.tiles)
    L.tileLayer(data.tiles.url, {
      attribution: data.tiles.attribution,
      subdomains: data.tiles.subdomains,
      maxZoom: 19,
    }).addTo(map);
  L.control.scale().addTo(map);
  var bounds = L.latLngBounds([]);
  if (data.route.length > 1) {
    var line = L.polyline(data.route, { smoothFactor: 0, noClip: true, className: 'route', weight: 4 }).addTo(map);
    bounds.extend(line.getBounds());
  }
  data.places.forEach(function (place) {
    var at = [place.latitude, place.longitude];
    L.circleMarker(at, { radius: 7, className: 'place' }).bindTooltip(place.name).addTo(map);
    bounds.extend(at);
  });
  if (latest) {
    var here = [latest.latitude, latest.longitude];
    L.circleMarker(here, { radius: 9, className: 'latest' }).bindTooltip('Last seen ' + latest.timestamp).addTo(map);
    bounds.extend(here);
  }
  if (bounds.isValid()) map.fitBounds(bounds, { padding: [24, 24], maxZoom: 14 });
  else map.setView([0, 0], 2);
})();
`;

export const TRACK_PAGE_STYLE = `
html, body { margin: 0; padding: 0; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: #1d2733; background: #fff; }
header, section { padding: 12px 16px; max-width: 960px; margin: 0 auto; }
h1 { font-size: 1.4rem; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 8px 0; }
.status { font-weight: 600; margin: 4px 0; }
.eta, .expires { margin: 4px 0; color: #4a5868; }
#map { height: 55vh; min-height: 260px; max-width: 960px; margin: 0 auto; background: #eef2f5; }
.leaflet-container { background: #eef2f5; }
.route { stroke: #1565c0; fill: none; }
.place { stroke: #6a1b9a; fill: #ce93d8; fill-opacity: 0.9; }
.latest { stroke: #b71c1c; fill: #ef5350; fill-opacity: 0.9; }
ol.timeline { list-style: none; padding: 0; margin: 0; }
ol.timeline li { padding: 8px 0; border-bottom: 1px solid #e3e8ee; display: flex; flex-wrap: wrap; gap: 4px 12px; }
ol.timeline .state { font-weight: 600; min-width: 8em; }
ol.timeline time { color: #4a5868; }
@media (max-width: 600px) { h1 { font-size: 1.2rem; } #map { height: 45vh; } }
`;
