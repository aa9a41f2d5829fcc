import { redactUrl } from '../../src/infrastructure/logging/redact-url.js';

describe('redactUrl', () => {
  it('replaces the value of every credential parameter, keeps the rest and the order', () => {
    expect(redactUrl('/api/v1/notifications/stream?ticket=abc.def&last_event_id=7')).toBe(
      '/api/v1/notifications/stream?ticket=[redacted]&last_event_id=7',
    );
    expect(redactUrl('/x?limit=5&access_token=a&API_KEY=b&X-Amz-Signature=c&client_secret=d&key=e&sig=f')).toBe(
      '/x?limit=5&access_token=[redacted]&API_KEY=[redacted]&X-Amz-Signature=[redacted]&client_secret=[redacted]&key=[redacted]&sig=[redacted]',
    );
  });

  it('judges percent-encoded names as decoded, and leaves URLs without credentials untouched', () => {
    expect(redactUrl('/x?tick%65t=s3cret&t%6Fken')).toBe('/x?tick%65t=[redacted]&t%6Fken=[redacted]');
    for (const url of ['/api/v1/clients', '/x?skip=0&limit=50', '/x?', '/x?%zz=1&monkey=1&tokens_left=3'])
      expect(redactUrl(url)).toBe(url);
  });

  it("replaces a share link's token in the path of its page and its public view", () => {
    const token = 'q3Vb0mZrX8sKf2LhT6wNc1PbD4eUaG7iR9oS5tYzQxA';
    expect(redactUrl(`/track/${token}`)).toBe('/track/[redacted]');
    expect(redactUrl(`/api/v1/public/track/${token}?ticket=x&limit=5`)).toBe(
      '/api/v1/public/track/[redacted]?ticket=[redacted]&limit=5',
    );
    expect(redactUrl(`/track/${token}/more`)).toBe('/track/[redacted]/more');
    for (const url of ['/track/', '/track-assets/leaflet.js', '/api/v1/trackers/7/track?format=gpx'])
      expect(redactUrl(url)).toBe(url);
  });
});
