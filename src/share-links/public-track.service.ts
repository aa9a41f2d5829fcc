import { Injectable } from '@nestjs/common';
import { ArrivalEstimatesService } from '../arrival-estimates/arrival-estimates.service.js';
import { AccessScope } from '../common/auth/access-scope.js';
import { DomainError } from '../common/errors/domain-error.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { NEAR_KEYS } from '../infrastructure/cache/cache-invalidation.js';
import { CacheService } from '../infrastructure/cache/cache.service.js';
import { NearCache } from '../infrastructure/cache/near-cache.js';
import { SingleFlight } from '../infrastructure/cache/single-flight.js';
import type { TrackerStatus } from '../tracker-states/tracker-status.js';
import { TracksService } from '../tracks/tracks.service.js';
import type { LocationPrecision } from './dto/share-link.dto.js';
import type { PublicTrackResponse } from './dto/public-track.response.js';
import { PublicRequestThrottle } from './public-request-throttle.js';
import { PublicTrackRepository, type PublicStatusRow, type PublicTrackerRow } from './public-track.repository.js';
import { hashShareToken, isShareTokenText } from './share-link-token.js';
import { SHARE_LINK_ERRORS } from './share-links.errors.js';
import { ShareLinksRepository } from './share-links.repository.js';

interface Loaded {
  tracker: PublicTrackerRow;
  history: PublicStatusRow[];
}

/** A link as the in-process tier keeps it (by token hash): what answering needs. */
interface CachedLink {
  trackerId: number;
  precision: LocationPrecision;
  /** Epoch ms. */
  expiresAt: number;
  revoked: boolean;
}
/** No link with this token hash (a plain `null` could not be cached). */
const NO_LINK = false;

/** What the page draws beside the view: the simplified route and the located places, at the link's precision. */
export interface PublicMapData {
  /** [latitude, longitude] pairs. */
  route: [number, number][];
  places: { name: string; latitude: number; longitude: number }[];
}

/** Route tolerances tried in turn (metres) until the route fits PAGE_ROUTE_MAX_POINTS. */
const ROUTE_TOLERANCES: Record<LocationPrecision, number[]> = {
  exact: [10, 100, 1000, 10_000],
  approximate: [500, 2000, 10_000],
  none: [],
};
export const PAGE_ROUTE_MAX_POINTS = 2000;
/**
 * How long a page's route is reused. Drawing it reads the tracker's whole track; a link opened by
 * many people (or reloaded 60 times a minute) reads it once a minute, and the newest report shows
 * as the latest location (read per request) meanwhile. Views that miss together wait for one read
 * (per instance) rather than each reading the track.
 */
export const PAGE_ROUTE_TTL_SECONDS = 60;

/**
 * The public view of a share link: the link is the permission, so nothing of the caller counts but
 * their IP (PublicRequestThrottle). Links are read through the in-process tier, which a database
 * trigger invalidates on every instance when a link is created, revoked or deleted (and the
 * revoking instance at once); expiry is checked per request. Unknown, expired and revoked links
 * answer alike.
 */
@Injectable()
export class PublicTrackService {
  /** Route reads in flight by cache key: concurrent misses of one route share one track read. */
  private readonly routeReads = new SingleFlight<[number, number][]>();

  constructor(
    private readonly links: ShareLinksRepository,
    private readonly view: PublicTrackRepository,
    private readonly near: NearCache,
    private readonly throttle: PublicRequestThrottle,
    private readonly arrivals: ArrivalEstimatesService,
    private readonly tracks: TracksService,
    private readonly cache: CacheService,
  ) {}

  /** Counts the request against the IP, then resolves the token; throws 429 or 404. */
  async open(token: string, ip: string): Promise<CachedLink> {
    await this.throttle.hit(ip);
    const link = isShareTokenText(token) ? await this.link(token) : null;
    if (!link || link.revoked || link.expiresAt <= Date.now())
      throw new DomainError(SHARE_LINK_ERRORS.shareLinkNotFound);
    return link;
  }

  async publicView(link: CachedLink): Promise<PublicTrackResponse> {
    return this.viewOf(link, await this.load(link));
  }

  /** The view and the map data of the page, from one read of the tracker. */
  async page(link: CachedLink): Promise<{ view: PublicTrackResponse; map: PublicMapData }> {
    const loaded = await this.load(link);
    const [view, route] = await Promise.all([this.viewOf(link, loaded), this.route(link)]);
    return { view, map: { route, places: placesOf(link, loaded) } };
  }

  private async load(link: CachedLink): Promise<Loaded> {
    const [tracker, history] = await Promise.all([
      this.view.tracker(link.trackerId),
      this.view.statusHistory(link.trackerId),
    ]);
    // The tracker went away since the link was read (its deletion takes the link along).
    if (!tracker) throw new DomainError(SHARE_LINK_ERRORS.shareLinkNotFound);
    return { tracker, history };
  }

  private async viewOf(link: CachedLink, { tracker, history }: Loaded): Promise<PublicTrackResponse> {
    const eta = await this.arrivals.estimate(AccessScope.admin(), {
      id: link.trackerId,
      status: tracker.status,
      destinationId: tracker.delivery_location_id,
      latestEntryId: tracker.status_entry_id,
    });
    const showLocation = link.precision !== 'none' && tracker.latest_reported_at !== null;
    return {
      tracker_name: tracker.name,
      status: tracker.status as TrackerStatus,
      destination_name: tracker.destination_name,
      status_history: history.map((entry) => ({
        status: entry.status as TrackerStatus,
        timestamp: entry.timestamp,
        location_name: entry.location_name,
      })),
      latest_location: showLocation
        ? {
            latitude: atPrecision(Number(tracker.latest_latitude), link.precision),
            longitude: atPrecision(Number(tracker.latest_longitude), link.precision),
            timestamp: tracker.latest_reported_at as string,
          }
        : null,
      eta,
      expires_at: new Date(link.expiresAt).toISOString(),
    };
  }

  /**
   * The page's route at the link's precision (kept PAGE_ROUTE_TTL_SECONDS); none for a `none` link.
   * The route is shared by every caller waiting on it and must not be changed.
   */
  private async route(link: CachedLink): Promise<[number, number][]> {
    if (link.precision === 'none') return [];
    const key = `share-route:${link.trackerId}:${link.precision}`;
    return this.routeReads.run(key, async () => {
      const cached = await this.cache.get<[number, number][]>(key);
      if (cached !== undefined) return cached;
      const route = await this.simplifiedRoute(link);
      await this.cache.set(key, route, PAGE_ROUTE_TTL_SECONDS);
      return route;
    });
  }

  private async simplifiedRoute(link: CachedLink): Promise<[number, number][]> {
    for (const simplifyM of ROUTE_TOLERANCES[link.precision]) {
      try {
        const doc = await this.tracks.track(
          AccessScope.admin(),
          link.trackerId,
          { start: null, end: null },
          { simplifyM, maxPoints: PAGE_ROUTE_MAX_POINTS },
        );
        const route: [number, number][] = [];
        doc.points.time.forEach((_, i) => {
          const point: [number, number] = [
            atPrecision(doc.points.latitude[i], link.precision),
            atPrecision(doc.points.longitude[i], link.precision),
          ];
          const last = route.at(-1);
          if (!last || last[0] !== point[0] || last[1] !== point[1]) route.push(point);
        });
        return route;
      } catch (error) {
        if (!(error instanceof RequestValidationException)) throw error;
      }
    }
    return [];
  }

  private async link(token: string): Promise<CachedLink | null> {
    const hash = hashShareToken(token);
    const key = NEAR_KEYS.shareLink(hash.toString('hex'));
    const cached = this.near.get<CachedLink | typeof NO_LINK>(key);
    if (cached !== undefined) return cached === NO_LINK ? null : cached;
    const ticket = this.near.ticket();
    const row = await this.links.byTokenHash(hash);
    const link: CachedLink | null = row && {
      trackerId: row.tracker_id,
      precision: row.location_precision,
      expiresAt: row.expires_at.getTime(),
      revoked: row.revoked_at !== null,
    };
    this.near.fill(key, link ?? NO_LINK, ticket);
    return link;
  }
}

/** The located places of the page (status locations and destination) at the link's precision; none for a `none` link. */
function placesOf(link: CachedLink, { tracker, history }: Loaded): PublicMapData['places'] {
  if (link.precision === 'none') return [];
  const named = new Map<string, { name: string; latitude: number; longitude: number }>();
  const located = [
    ...history.map((e) => ({ name: e.location_name, latitude: e.latitude, longitude: e.longitude })),
    {
      name: tracker.destination_name,
      latitude: tracker.destination_latitude,
      longitude: tracker.destination_longitude,
    },
  ];
  for (const place of located)
    if (place.name !== null && place.latitude !== null && place.longitude !== null)
      named.set(place.name, {
        name: place.name,
        latitude: atPrecision(Number(place.latitude), link.precision),
        longitude: atPrecision(Number(place.longitude), link.precision),
      });
  return [...named.values()];
}

/** A coordinate at the link's precision: `approximate` rounds to 2 decimals (about 1 km). */
function atPrecision(value: number, precision: LocationPrecision): number {
  return precision === 'approximate' ? Math.round(value * 100) / 100 : value;
}
