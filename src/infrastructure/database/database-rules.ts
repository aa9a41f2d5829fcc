/**
 * The current definition of a database function or trigger, kept in src/ beside the feature whose
 * rule it is; migrations are its history. Files named `*.db-rules.ts` export one `DatabaseRules`
 * value each, and a test compares every function and trigger of the migrated database with them.
 */
export interface DatabaseFunction {
  /** Function name without schema, e.g. `tps_status_event`. */
  name: string;
  /** The full `CREATE OR REPLACE FUNCTION …` statement. */
  sql: string;
}

export interface DatabaseTrigger {
  /** Trigger name. */
  name: string;
  /** Table the trigger is on. */
  table: string;
  /** The full `CREATE TRIGGER …` statement. */
  sql: string;
}

export interface DatabaseRules {
  functions: readonly DatabaseFunction[];
  triggers: readonly DatabaseTrigger[];
}
