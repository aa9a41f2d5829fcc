import { Module } from '@nestjs/common';
import { LocationsModule } from '../locations/locations.module.js';
import { DeviceIngestController } from './device-ingest.controller.js';
import { DeviceProtocolsService } from './device-protocols.service.js';
import { DeviceReportsService } from './device-reports.service.js';
import { DevicesRepository } from './devices.repository.js';
import { MqttIngestHealth } from './mqtt-ingest.health.js';
import { MqttIngestMetrics } from './mqtt-ingest-metrics.js';
import { MqttIngestService } from './mqtt-ingest.service.js';

/**
 * Device ingest: reports of devices and relays that identify themselves by a tracker's `device_id`
 * (HTTP dialects OsmAnd / Traccar Client and OwnTracks; MQTT), stored through the location ingest.
 */
@Module({
  imports: [LocationsModule],
  controllers: [DeviceIngestController],
  providers: [
    DevicesRepository,
    DeviceReportsService,
    DeviceProtocolsService,
    MqttIngestMetrics,
    MqttIngestService,
    MqttIngestHealth,
  ],
})
export class DevicesModule {}
