import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/access.decorator.js';
import type { AppConfig } from '../common/config/app-config.js';
import { APP_CONFIG } from '../common/config/config.module.js';
import { DomainError } from '../common/errors/domain-error.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { PublicTrackResponse } from './dto/public-track.response.js';
import { notFoundPageHtml, trackPageHtml, trackPagePolicy } from './public-track.page.js';
import { PublicTrackService } from './public-track.service.js';
import { SHARE_LINK_ERRORS } from './share-links.errors.js';

const TOKEN_PARAM = {
  name: 'token',
  description: 'The share link’s token (the last part of its `url_path`)',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
} as const;

const PUBLIC_HEADERS = {
  'Cache-Control': { description: 'Always `no-store`', schema: { type: 'string', enum: ['no-store'] } },
  'Referrer-Policy': { description: 'Always `no-referrer`', schema: { type: 'string', enum: ['no-referrer'] } },
};

/** Set first, so every answer of the public routes carries them — 404 and 429 included. */
function publicHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** The client address as Express resolves it (TRUST_PROXY decides whether a proxy's hop counts). */
const clientIp = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * The public side of share links, for people without an account: the JSON view and the tracking
 * page. No authentication (the token is the permission); every request counts against the client
 * IP's limit.
 */
@ApiTags('share-links')
@Controller()
@Public()
export class PublicTrackController {
  constructor(
    private readonly publicTrack: PublicTrackService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('public/track/:token')
  @ApiOperation({
    summary: 'The public view of a share link (no authentication)',
    description:
      'Name, status, destination, status history, latest location (at the link’s precision) and arrival estimate of the ' +
      'tracker; never ids, client, brand, run, notes, users or raw reports. More than 60 requests a minute from one IP to ' +
      'this route and the page together → 429.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiOkResponse({ type: PublicTrackResponse, headers: PUBLIC_HEADERS })
  @ApiErrors(SHARE_LINK_ERRORS.shareLinkNotFound, SHARE_LINK_ERRORS.tooManyPublicRequests)
  async view(
    @Param('token') token: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PublicTrackResponse> {
    publicHeaders(res);
    return this.publicTrack.publicView(await this.publicTrack.open(token, clientIp(req)));
  }

  @Get('track/:token')
  @ApiOperation({
    summary: 'The public tracking page of a share link (HTML, no authentication)',
    description:
      'A self-contained page (scripts and styles from this service only) with the name, status, arrival estimate, ' +
      'status timeline and a map of the route. Unknown, expired or revoked links → a plain 404 page. Counts against the ' +
      'same per-IP limit as the JSON view.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/html')
  @ApiOkResponse({
    description: 'The page',
    headers: PUBLIC_HEADERS,
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiErrors(SHARE_LINK_ERRORS.tooManyPublicRequests, {
    ...SHARE_LINK_ERRORS.shareLinkNotFound,
    summary: 'Unknown, expired or revoked link: the answer is a plain HTML page (text/html) saying so',
  })
  async page(@Param('token') token: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    publicHeaders(res);
    res.setHeader('Content-Security-Policy', trackPagePolicy(this.config.sharing));
    let html: string;
    try {
      const link = await this.publicTrack.open(token, clientIp(req));
      const { view, map } = await this.publicTrack.page(link);
      html = trackPageHtml(view, map, this.config.sharing);
    } catch (error) {
      if (!(error instanceof DomainError) || error.error.code !== SHARE_LINK_ERRORS.shareLinkNotFound.code) throw error;
      res.status(404).type('html').send(notFoundPageHtml());
      return;
    }
    res.status(200).type('html').send(html);
  }
}
