import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Public } from '../common/auth/access.decorator.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { TRACK_PAGE_SCRIPT, TRACK_PAGE_STYLE } from './track-page.assets.js';

interface Asset {
  type: string;
  body: Buffer;
}

/** The map library from npm, read once: the page never loads anything from another origin. */
function leafletFile(name: string): Buffer {
  return readFileSync(createRequire(import.meta.url).resolve(`leaflet/dist/${name}`));
}

/**
 * Static files of the public tracking page (`/track-assets/<name>`): Leaflet's script and style and
 * the page's own. Not part of the API (not in the OpenAPI document), not counted by the public
 * routes' per-IP limit; cacheable for a day.
 */
@ApiExcludeController()
@Controller('track-assets')
@Public()
export class TrackAssetsController {
  private readonly assets = new Map<string, Asset>([
    ['leaflet.js', { type: 'text/javascript; charset=utf-8', body: leafletFile('leaflet.js') }],
    ['leaflet.css', { type: 'text/css; charset=utf-8', body: leafletFile('leaflet.css') }],
    ['track-page.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(TRACK_PAGE_SCRIPT) }],
    ['track-page.css', { type: 'text/css; charset=utf-8', body: Buffer.from(TRACK_PAGE_STYLE) }],
  ]);

  @Get(':name')
  asset(@Param('name') name: string, @Res() res: Response): void {
    const asset = this.assets.get(name);
    if (!asset) throw new DomainError(ERRORS.notFound);
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(asset.body);
  }
}
