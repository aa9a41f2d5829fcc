import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import { CreateShareLinkDto, ListShareLinksQuery } from './dto/share-link.dto.js';
import { ShareLinkResponse } from './dto/share-link.response.js';
import { SHARE_LINK_ERRORS } from './share-links.errors.js';
import { ShareLinksService } from './share-links.service.js';

/** Share links of trackers, managed by people who see the tracker (a key needs `write` to create or revoke). */
@ApiTags('share-links')
@Controller()
@Access('admin', 'user')
export class ShareLinksController {
  constructor(private readonly links: ShareLinksService) {}

  @Post('trackers/:id/share-links')
  @ApiOperation({
    summary: 'Create a share link; the answer carries its token and url_path, shown this once',
    description:
      'Anyone with the link sees the public view and page of the tracker until it expires or is revoked, at the chosen location precision.',
  })
  @ApiCreatedResponse({ type: ShareLinkResponse })
  @ApiErrors(
    TRACKER_ERRORS.trackerNotFound,
    { ...ERRORS.invalidField('expires_at', 'must be in the future'), summary: 'expires_at past or beyond 90 days' },
    ERRORS.invalidField('expires_at', 'must be at most 90 days ahead'),
    ERRORS.invalidField('location_precision', 'must be one of exact, approximate, none'),
  )
  create(
    @CurrentUser() user: AuthUser,
    @IdParam() id: number,
    @Body() body: CreateShareLinkDto,
  ): Promise<ShareLinkResponse> {
    return this.links.create(user, id, body);
  }

  @Get('trackers/:id/share-links')
  @ApiOperation({
    summary: "The caller's share links of a tracker (an admin: all), revoked and expired ones included",
    description: '`token` and `url_path` are null here: they are shown only when a link is created.',
  })
  @ApiOkResponse({ type: PageOf(ShareLinkResponse) })
  @ApiErrors(TRACKER_ERRORS.trackerNotFound)
  list(
    @CurrentUser() user: AuthUser,
    @IdParam() id: number,
    @Query() query: ListShareLinksQuery,
  ): Promise<Page<ShareLinkResponse>> {
    return this.links.list(user, id, query);
  }

  @Delete('share-links/:id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke a share link (idempotent: a second call keeps the first `revoked_at`)',
    description: 'The link answers 404 at once on this instance and within a second on every other.',
  })
  @ApiOkResponse({ type: ShareLinkResponse })
  @ApiErrors(SHARE_LINK_ERRORS.shareLinkNotFound)
  revoke(@CurrentUser() user: AuthUser, @IdParam() id: number): Promise<ShareLinkResponse> {
    return this.links.revoke(user, id);
  }
}
