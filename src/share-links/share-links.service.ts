import { Injectable } from '@nestjs/common';
import { AccessScope } from '../common/auth/access-scope.js';
import { isAdmin, type AuthUser } from '../common/auth/auth-user.js';
import { found } from '../common/errors/domain-error.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { TRACKER_ERRORS } from '../tracker-states/trackers.errors.js';
import type { CreateShareLinkDto, ListShareLinksQuery } from './dto/share-link.dto.js';
import { toShareLinkResponse, type ShareLinkResponse } from './dto/share-link.response.js';
import { newShareToken } from './share-link-token.js';
import { SHARE_LINK_ERRORS } from './share-links.errors.js';
import { ShareLinksRepository, type LinkViewer } from './share-links.repository.js';

const DAY_MS = 86_400_000;
export const DEFAULT_LIFETIME_DAYS = 7;
export const MAX_LIFETIME_DAYS = 90;

/**
 * Share links of trackers: created by anyone who sees the tracker, listed and revoked by their
 * creator (an admin: any link). The token is returned once, at creation; only its hash is stored.
 */
@Injectable()
export class ShareLinksService {
  constructor(
    private readonly links: ShareLinksRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async create(caller: AuthUser, trackerId: number, dto: CreateShareLinkDto): Promise<ShareLinkResponse> {
    const expiresAt = checkedExpiry(dto.expires_at);
    const { token, hash } = newShareToken();
    const row = await this.links.insert(AccessScope.of(caller), {
      trackerId,
      tokenHash: hash,
      precision: dto.location_precision ?? 'approximate',
      expiresAt,
      createdBy: caller.id,
    });
    return toShareLinkResponse(found(row, TRACKER_ERRORS.trackerNotFound), token);
  }

  async list(caller: AuthUser, trackerId: number, query: ListShareLinksQuery): Promise<Page<ShareLinkResponse>> {
    const viewer = viewerOf(caller);
    if (!(await this.links.trackerVisible(viewer.scope, trackerId))) found(null, TRACKER_ERRORS.trackerNotFound);
    const { rows, total } = await this.links.list(viewer, trackerId, query);
    return toPage(
      rows.map((row) => toShareLinkResponse(row)),
      total,
      query,
    );
  }

  /**
   * Revokes the link (idempotent: a revoked link keeps its first `revoked_at`). This instance drops
   * its cached copy at once; the database trigger tells the others at commit.
   */
  async revoke(caller: AuthUser, id: number): Promise<ShareLinkResponse> {
    const row = found(await this.links.revoke(viewerOf(caller), id), SHARE_LINK_ERRORS.shareLinkNotFound);
    this.invalidation.shareLinkChanged(row.token_hash_hex);
    return toShareLinkResponse(row);
  }
}

function viewerOf(caller: AuthUser): LinkViewer {
  return { scope: AccessScope.of(caller), userId: caller.id, admin: isAdmin(caller) };
}

/** The expiry: in the future and at most MAX_LIFETIME_DAYS ahead (default DEFAULT_LIFETIME_DAYS); else 422. */
function checkedExpiry(expiresAt: Date | undefined): Date {
  const now = Date.now();
  if (expiresAt === undefined) return new Date(now + DEFAULT_LIFETIME_DAYS * DAY_MS);
  if (expiresAt.getTime() <= now) throw RequestValidationException.field('expires_at', 'must be in the future');
  if (expiresAt.getTime() > now + MAX_LIFETIME_DAYS * DAY_MS)
    throw RequestValidationException.field('expires_at', `must be at most ${MAX_LIFETIME_DAYS} days ahead`);
  return expiresAt;
}
