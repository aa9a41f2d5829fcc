import { Injectable } from '@nestjs/common';
import type { AccessScope } from '../common/auth/access-scope.js';
import { Db, raw, sql, type PagedRows, type Sql } from '../infrastructure/database/db.js';
import type { LocationPrecision } from './dto/share-link.dto.js';

export interface ShareLinkRow {
  id: number;
  tracker_id: number;
  location_precision: LocationPrecision;
  expires_at: Date;
  created_by: number | null;
  created_at: Date;
  revoked_at: Date | null;
  /** Hex of the token's SHA-256 (the cache key of the link; never answered). */
  token_hash_hex: string;
}

/** Whose links a caller manages: the links of trackers in their scope, their own unless admin. */
export interface LinkViewer {
  scope: AccessScope;
  userId: number;
  admin: boolean;
}

const COLUMNS = raw(
  `s.id, s.tracker_id, s.location_precision, s.expires_at, s.created_by, s.created_at, s.revoked_at,
   encode(s.token_hash, 'hex') AS token_hash_hex`,
);

function visible(viewer: LinkViewer): Sql {
  const own = viewer.admin ? raw('TRUE') : sql`s.created_by = ${viewer.userId}`;
  return sql`${own} AND ${viewer.scope.visibleTracker('s.tracker_id')}`;
}

/** SQL of share links. Visibility: the tracker is in the caller's scope and the link is theirs (an admin: any). */
@Injectable()
export class ShareLinksRepository {
  constructor(private readonly db: Db) {}

  async trackerVisible(scope: AccessScope, trackerId: number): Promise<boolean> {
    const row = await this.db.first<{ id: number }>(
      sql`SELECT t.id FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
           WHERE t.id = ${trackerId} AND ${scope.visibleClient('pr.client_id')}`,
    );
    return row !== null;
  }

  /** Inserts a link of a tracker the scope sees (checked in the statement); null when it does not. */
  insert(
    scope: AccessScope,
    values: { trackerId: number; tokenHash: Buffer; precision: LocationPrecision; expiresAt: Date; createdBy: number },
  ): Promise<ShareLinkRow | null> {
    return this.db.first<ShareLinkRow>(
      sql`INSERT INTO share_links AS s (tracker_id, token_hash, location_precision, expires_at, created_by)
          SELECT t.id, ${values.tokenHash}, ${values.precision}, ${values.expiresAt}, ${values.createdBy}
            FROM trackers t JOIN production_runs pr ON pr.id = t.production_run_id
           WHERE t.id = ${values.trackerId} AND ${scope.visibleClient('pr.client_id')}
          RETURNING ${COLUMNS}`,
    );
  }

  list(viewer: LinkViewer, trackerId: number, page: { skip: number; limit: number }): Promise<PagedRows<ShareLinkRow>> {
    return this.db.page<ShareLinkRow>(
      {
        columns: COLUMNS,
        from: sql`share_links s`,
        where: [sql`s.tracker_id = ${trackerId}`, visible(viewer)],
        orderBy: sql`s.id`,
      },
      page,
    );
  }

  /** Revokes the visible link; a revoked link keeps its first `revoked_at`. */
  revoke(viewer: LinkViewer, id: number): Promise<ShareLinkRow | null> {
    return this.db.first<ShareLinkRow>(
      sql`UPDATE share_links AS s SET revoked_at = COALESCE(s.revoked_at, now())
          WHERE s.id = ${id} AND ${visible(viewer)} RETURNING ${COLUMNS}`,
    );
  }

  /** The link with this token hash, whatever its state (read when the in-process tier does not hold it). */
  byTokenHash(tokenHash: Buffer): Promise<ShareLinkRow | null> {
    return this.db.first<ShareLinkRow>(sql`SELECT ${COLUMNS} FROM share_links s WHERE s.token_hash = ${tokenHash}`);
  }
}
