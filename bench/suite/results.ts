import type { ScenarioName } from './options.js';

/** One measured number, with its goal and ratio to a same-run ceiling where those apply. */
export interface Figure {
  label: string;
  value: number;
  unit: string;
  /** Ratio to a ceiling measured in the same run. */
  ratio?: { to: string; value: number };
  goal?: { text: string; met: boolean };
  note?: string;
}

export interface ScenarioOutcome {
  name: ScenarioName;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  seconds: number;
  figures: Figure[];
}

export function fmt(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const number = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${number} ${unit}` : number;
}

export const pct = (ratio: number) => `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)} %`;
export const mb = (bytes: number) => bytes / 1024 / 1024;
