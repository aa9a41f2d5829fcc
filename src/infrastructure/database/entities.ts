import { RevokedTokenEntity } from '../../auth/entities/revoked-token.entity.js';
import { BrandEntity } from '../../brands/entities/brand.entity.js';
import { ClientEntity } from '../../clients/entities/client.entity.js';
import { DeliveryLocationEntity } from '../../delivery-locations/entities/delivery-location.entity.js';
import { ImageEntity } from '../../images/entities/image.entity.js';
import { LocationHistoryDailyEntity, LocationHistoryHourlyEntity } from '../../locations/entities/location-history.entity.js';
import { LocationReportEntity } from '../../locations/entities/location-report.entity.js';
import { ProductionRunEntity } from '../../production-runs/entities/production-run.entity.js';
import { StorageLocationEntity } from '../../storage-locations/entities/storage-location.entity.js';
import { TrackerStatusEntryEntity } from '../../trackers/entities/tracker-status-entry.entity.js';
import { TrackerEntity } from '../../trackers/entities/tracker.entity.js';
import { UserEntity } from '../../users/entities/user.entity.js';

export const ENTITIES = [
  UserEntity,
  RevokedTokenEntity,
  ClientEntity,
  BrandEntity,
  ProductionRunEntity,
  StorageLocationEntity,
  DeliveryLocationEntity,
  TrackerEntity,
  TrackerStatusEntryEntity,
  LocationReportEntity,
  LocationHistoryHourlyEntity,
  LocationHistoryDailyEntity,
  ImageEntity,
];
