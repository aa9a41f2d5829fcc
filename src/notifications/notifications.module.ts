import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { NotificationMetrics } from './notification-metrics.js';
import { NotificationStreams } from './notification-streams.service.js';
import { NotificationsController } from './notifications.controller.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';
import { StreamCredentials } from './stream-credentials.js';
import { StreamSlotsRepository } from './stream-slots.repository.js';
import { StreamAuthGuard } from './stream-auth.guard.js';
import { StreamTickets } from './stream-tickets.service.js';

/**
 * In-app notifications: the inbox, stream tickets and the live stream. Events and the per-user
 * rows are written by the database in the transaction of each status change (see the migration
 * NotificationEvents); this module reads and delivers them.
 */
@Module({
  imports: [AuthModule],
  controllers: [NotificationsController],
  providers: [
    NotificationsService,
    NotificationsRepository,
    NotificationStreams,
    NotificationMetrics,
    StreamTickets,
    StreamCredentials,
    StreamSlotsRepository,
    StreamAuthGuard,
  ],
  exports: [NotificationStreams],
})
export class NotificationsModule {}
