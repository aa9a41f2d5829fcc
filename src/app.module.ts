import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AlertsModule } from './alerts/alerts.module.js';
import { AnalyticsModule } from './analytics/analytics.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AuthModule } from './auth/auth.module.js';
import { BrandsModule } from './brands/brands.module.js';
import { ClientsModule } from './clients/clients.module.js';
import type { AppConfig } from './common/config/app-config.js';
import { AppConfigModule } from './common/config/config.module.js';
import { HttpExceptionFilter } from './infrastructure/http/http-exception.filter.js';
import { GeofencesModule } from './geofences/geofences.module.js';
import { HealthModule } from './health/health.module.js';
import { ImagesModule } from './images/images.module.js';
import { CacheModule } from './infrastructure/cache/cache.module.js';
import { DevicesModule } from './devices/devices.module.js';
import { DatabaseModule } from './infrastructure/database/database.module.js';
import { LoggingModule } from './infrastructure/logging/logging.module.js';
import { LocationsModule } from './locations/locations.module.js';
import { MailModule } from './mail/mail.module.js';
import { MaintenanceModule } from './maintenance/maintenance.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { NotificationsModule } from './notifications/notifications.module.js';
import { ProductionRunsModule } from './production-runs/production-runs.module.js';
import { SeedModule } from './seed/seed.module.js';
import { PlacesModule } from './places/places.module.js';
import { TrackersModule } from './trackers/trackers.module.js';
import { TracksModule } from './tracks/tracks.module.js';
import { ShareLinksModule } from './share-links/share-links.module.js';
import { UsersModule } from './users/users.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** Root module, built from an already-validated config (main.ts, the CLI and tests each make one). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        LoggingModule,
        DatabaseModule,
        CacheModule,
        AuthModule,
        ApiKeysModule,
        UsersModule,
        ClientsModule,
        BrandsModule,
        ProductionRunsModule,
        PlacesModule,
        TrackersModule,
        LocationsModule,
        DevicesModule,
        GeofencesModule,
        NotificationsModule,
        AnalyticsModule,
        ImagesModule,
        HealthModule,
        SeedModule,
        MetricsModule,
        MailModule,
        WebhooksModule,
        TracksModule,
        ShareLinksModule,
        AlertsModule,
        MaintenanceModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: HttpExceptionFilter }],
    };
  }
}
