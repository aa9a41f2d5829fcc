/** The conditions an alert can stand for. */
export const ALERT_KINDS = ['silent', 'overdue', 'battery_low'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
