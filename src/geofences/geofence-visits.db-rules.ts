import type { DatabaseRules } from '../infrastructure/database/database-rules.js';

/**
 * geofence_visits carries no foreign keys (a pass inserts tens of thousands of visits); these triggers keep what the
 * keys did: deleting trackers deletes their visits, deleting a location visits still name fails with
 * foreign_key_violation (the API checks first and answers 409).
 */
export const GEOFENCE_VISIT_RULES: DatabaseRules = {
  functions: [
    {
      name: 'trackers_delete_geofence_visits',
      sql: `
      CREATE OR REPLACE FUNCTION trackers_delete_geofence_visits() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM geofence_visits v USING deleted_trackers d WHERE v.tracker_id = d.id;
        RETURN NULL;
      END $$`,
    },
    {
      name: 'locations_keep_visited',
      sql: `
      CREATE OR REPLACE FUNCTION locations_keep_visited() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM geofence_visits v JOIN deleted_locations d
                     ON d.id = CASE TG_TABLE_NAME WHEN 'storage_locations' THEN v.storage_location_id ELSE v.delivery_location_id END) THEN
          RAISE EXCEPTION 'a deleted % row is still referenced from geofence_visits', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
      END $$`,
    },
  ],
  triggers: [
    {
      name: 'trackers_delete_geofence_visits',
      table: 'trackers',
      sql: `
      CREATE TRIGGER trackers_delete_geofence_visits AFTER DELETE ON trackers
        REFERENCING OLD TABLE AS deleted_trackers
        FOR EACH STATEMENT EXECUTE FUNCTION trackers_delete_geofence_visits()`,
    },
    {
      name: 'storage_locations_keep_visited',
      table: 'storage_locations',
      sql: `
      CREATE TRIGGER storage_locations_keep_visited AFTER DELETE ON storage_locations
        REFERENCING OLD TABLE AS deleted_locations FOR EACH STATEMENT EXECUTE FUNCTION locations_keep_visited()`,
    },
    {
      name: 'delivery_locations_keep_visited',
      table: 'delivery_locations',
      sql: `
      CREATE TRIGGER delivery_locations_keep_visited AFTER DELETE ON delivery_locations
        REFERENCING OLD TABLE AS deleted_locations FOR EACH STATEMENT EXECUTE FUNCTION locations_keep_visited()`,
    },
  ],
};
