import type { Response } from 'express';

/** Response headers of the public bytes route. */
const IMAGE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const IMAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

export function setImageHeaders(res: Response, etag: string): void {
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', IMAGE_CACHE_CONTROL);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Replaces the app-wide policy: an SVG opened directly can run nothing and load nothing.
  res.setHeader('Content-Security-Policy', IMAGE_CONTENT_SECURITY_POLICY);
  // The name is a public capability and front ends may live on another origin (CORS_ORIGINS).
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}

/** If-None-Match (RFC 9110 §13.1.2): `*` or any listed tag equal under weak comparison. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}
