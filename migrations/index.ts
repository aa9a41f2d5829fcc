/** Every migration, in order. Listed explicitly so ts-jest, tsc output and the CLI load the same set. */
import { InitialSchema1763700000000 } from './1763700000000-InitialSchema.js';
import { LocationRowsFollowTrackersByTrigger1763720000000 } from './1763720000000-LocationRowsFollowTrackersByTrigger.js';
import { StatusHistoryCoveringIndex1763730000000 } from './1763730000000-StatusHistoryCoveringIndex.js';
import { AggregateTablesLeaveRoomForHotUpdates1763740000000 } from './1763740000000-AggregateTablesLeaveRoomForHotUpdates.js';
import { DailyRowsCountTheirHours1763750000000 } from './1763750000000-DailyRowsCountTheirHours.js';
import { TrackerDeletesWaitForLocationWrites1763760000000 } from './1763760000000-TrackerDeletesWaitForLocationWrites.js';
import { UserTokensValidAfter1763775000000 } from './1763775000000-UserTokensValidAfter.js';
import { Geofences1763790000000 } from './1763790000000-Geofences.js';
import { NotificationEvents1763800000000 } from './1763800000000-NotificationEvents.js';
import { MailDigests1763805000000 } from './1763805000000-MailDigests.js';
import { TrackerJourneyFacts1763810000000 } from './1763810000000-TrackerJourneyFacts.js';
import { PartitionLocationReports1763820000000 } from './1763820000000-PartitionLocationReports.js';
import { GeofencePassWrites1763830000000 } from './1763830000000-GeofencePassWrites.js';
import { CacheInvalidationNotifications1763860000000 } from './1763860000000-CacheInvalidationNotifications.js';
import { GeofenceBatchMarks1763900000000 } from './1763900000000-GeofenceBatchMarks.js';
import { JourneyFactsAppend1763920000000 } from './1763920000000-JourneyFactsAppend.js';
import { JourneyFactsByRun1763940000000 } from './1763940000000-JourneyFactsByRun.js';
import { GeofenceMarkTime1763960000000 } from './1763960000000-GeofenceMarkTime.js';
import { TrackersFollowLatestEntry1763980000000 } from './1763980000000-TrackersFollowLatestEntry.js';

import { Alerts1764100000000 } from './1764100000000-Alerts.js';
import { RunAlertSilentHours1764040000000 } from './1764040000000-RunAlertSilentHours.js';
import { OutboxDueOrder1764050000000 } from './1764050000000-OutboxDueOrder.js';
import { ReportBattery1764030000000 } from './1764030000000-ReportBattery.js';
import { TrackerDeviceIds1764020000000 } from './1764020000000-TrackerDeviceIds.js';
import { NotificationStreamSlots1763990000000 } from './1763990000000-NotificationStreamSlots.js';
import { ApiKeys1764000000000 } from './1764000000000-ApiKeys.js';
import { Webhooks1764010000000 } from './1764010000000-Webhooks.js';
import { ShareLinks1764200000000 } from './1764200000000-ShareLinks.js';
import { ReportActivityUpkeep1764400000000 } from './1764400000000-ReportActivityUpkeep.js';
import { JourneyFactsFreshTrackers1764500000000 } from './1764500000000-JourneyFactsFreshTrackers.js';
import { WebhookManualRetries1764600000000 } from './1764600000000-WebhookManualRetries.js';

export const MIGRATIONS = [
  InitialSchema1763700000000,
  LocationRowsFollowTrackersByTrigger1763720000000,
  StatusHistoryCoveringIndex1763730000000,
  AggregateTablesLeaveRoomForHotUpdates1763740000000,
  DailyRowsCountTheirHours1763750000000,
  TrackerDeletesWaitForLocationWrites1763760000000,
  UserTokensValidAfter1763775000000,
  Geofences1763790000000,
  NotificationEvents1763800000000,
  MailDigests1763805000000,
  TrackerJourneyFacts1763810000000,
  PartitionLocationReports1763820000000,
  GeofencePassWrites1763830000000,
  CacheInvalidationNotifications1763860000000,
  GeofenceBatchMarks1763900000000,
  JourneyFactsAppend1763920000000,
  JourneyFactsByRun1763940000000,
  GeofenceMarkTime1763960000000,
  TrackersFollowLatestEntry1763980000000,

  NotificationStreamSlots1763990000000,
  ApiKeys1764000000000,
  Webhooks1764010000000,
  TrackerDeviceIds1764020000000,
  ReportBattery1764030000000,
  RunAlertSilentHours1764040000000,
  OutboxDueOrder1764050000000,
  Alerts1764100000000,
  ShareLinks1764200000000,
  ReportActivityUpkeep1764400000000,
  JourneyFactsFreshTrackers1764500000000,
  WebhookManualRetries1764600000000,
];
