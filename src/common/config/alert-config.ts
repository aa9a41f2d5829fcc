/** The part of the configuration reader alertConfig uses (app-config.ts's Reader). */
interface ConfigReader {
  readonly problems: string[];
  string(name: string, fallback: string): string;
  int(name: string, fallback: number, min: number, max: number): number;
  bool(name: string, fallback: boolean): boolean;
}

/** The alert kinds (the alerts module owns them; config must not import it). */
const ALERT_KIND_NAMES = ['silent', 'overdue', 'battery_low'];

export interface AlertConfig {
  /** ALERTS_ENABLED: false keeps no report activity, runs no check and resolves nothing on reports. */
  enabled: boolean;
  /** Hours without a report or status entry after which a tracker is silent, where its run sets none. */
  silentHours: number;
  /** A newest battery level at or below this many percent is low. */
  batteryPercent: number;
  /** Seconds between two checks of the conditions (each instance tries; one at a time runs). */
  checkSeconds: number;
  /** Kinds whose opened alerts join e-mail digests (`none`: no alert e-mails). */
  emailKinds: string[];
}

export function alertConfig(r: ConfigReader): AlertConfig {
  const listed = r.string('EMAIL_NOTIFY_ALERTS', 'silent,overdue').trim();
  const emailKinds =
    listed.toLowerCase() === 'none'
      ? []
      : listed
          .split(',')
          .map((kind) => kind.trim())
          .filter(Boolean);
  for (const kind of emailKinds) {
    if (!ALERT_KIND_NAMES.includes(kind))
      r.problems.push(`EMAIL_NOTIFY_ALERTS entry "${kind}" must be one of ${ALERT_KIND_NAMES.join(', ')} (or none)`);
  }
  return {
    enabled: r.bool('ALERTS_ENABLED', true),
    silentHours: r.int('ALERT_SILENT_HOURS', 24, 1, 720),
    batteryPercent: r.int('ALERT_BATTERY_PERCENT', 15, 0, 100),
    checkSeconds: r.int('ALERT_CHECK_SECONDS', 60, 1, 86_400),
    emailKinds,
  };
}
