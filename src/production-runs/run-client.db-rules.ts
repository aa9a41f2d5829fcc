import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * A production run's client is its brand's client: set whenever a run is written or moved to another brand, and
 * carried to the brand's runs when the brand changes client.
 */
export const RUN_CLIENT_RULES: DatabaseRules = {
  functions: [
    {
      name: 'production_runs_set_client',
      sql: `
      CREATE OR REPLACE FUNCTION production_runs_set_client() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT client_id INTO NEW.client_id FROM brands WHERE id = NEW.brand_id;
        RETURN NEW;
      END $$`,
    },
    {
      name: 'brands_propagate_client',
      sql: `
      CREATE OR REPLACE FUNCTION brands_propagate_client() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE production_runs SET client_id = NEW.client_id WHERE brand_id = NEW.id;
        RETURN NEW;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'production_runs_set_client',
      table: 'production_runs',
      sql: `
      CREATE TRIGGER production_runs_set_client BEFORE INSERT OR UPDATE OF brand_id ON production_runs
        FOR EACH ROW EXECUTE FUNCTION production_runs_set_client()`,
    },
    {
      name: 'brands_propagate_client',
      table: 'brands',
      sql: `
      CREATE TRIGGER brands_propagate_client AFTER UPDATE OF client_id ON brands
        FOR EACH ROW WHEN (OLD.client_id IS DISTINCT FROM NEW.client_id) EXECUTE FUNCTION brands_propagate_client()`,
    },
  ],
};
