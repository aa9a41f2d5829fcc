import {
  PipelineStepProvider,
  stepOutcome,
  type PipelineStepSource,
  type StepOutcome,
} from '../infrastructure/health/pipeline-step.js';
import { MqttIngestService } from './mqtt-ingest.service.js';

/**
 * check_mqtt_ingest: this instance is connected to the broker and subscribed, or MQTT ingest is
 * off (no MQTT_URL). Reads no table: it is the answering instance's own connection.
 */
@PipelineStepProvider()
export class MqttIngestHealth implements PipelineStepSource {
  readonly pipelineSteps = {
    check_mqtt_ingest: () => Promise.resolve(this.mqttIngest()),
  };

  constructor(private readonly ingest: MqttIngestService) {}

  private mqttIngest(): StepOutcome {
    const state = this.ingest.state();
    if (!state.enabled) return stepOutcome({ skipped: true, reason: 'MQTT_URL is not set: MQTT ingest is off' });
    const issues = state.connected
      ? []
      : [
          `Not subscribed to ${state.subscription} at ${state.broker} since ${state.disconnected_since}` +
            (state.last_error ? ` (${state.last_error})` : ''),
        ];
    return stepOutcome({ skipped: false, ...state }, issues);
  }
}
