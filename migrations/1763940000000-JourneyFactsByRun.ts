import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Journey facts carry their tracker's production run, so run analytics read a run's facts rows
 * through one index range instead of one index probe per tracker, and find the trackers that are
 * late for an as_of (last entry after it; usually none) with a range of the same index,
 * (production_run_id, last_at), without scanning the run's rows.
 *
 * The column is filled by a BEFORE INSERT trigger from the tracker row (the facts functions insert
 * positionally and need no change); a tracker never changes runs through the API, and a trigger on
 * trackers keeps the facts row right should a run ever change by other means. The price of last_at
 * in the index: an update that moves a tracker's last entry is not a HOT update (three index
 * entries instead of none), a few microseconds per status write.
 */
export class JourneyFactsByRun1763940000000 implements MigrationInterface {
  name = 'JourneyFactsByRun1763940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tracker_journey_facts ADD COLUMN production_run_id integer`);
    await q.query(`UPDATE tracker_journey_facts f SET production_run_id = t.production_run_id FROM trackers t WHERE t.id = f.tracker_id`);
    await q.query(`DELETE FROM tracker_journey_facts WHERE production_run_id IS NULL`);
    await q.query(`ALTER TABLE tracker_journey_facts ALTER COLUMN production_run_id SET NOT NULL`);
    await q.query(`CREATE INDEX tracker_journey_facts_run_idx ON tracker_journey_facts (production_run_id, last_at)`);
    await q.query(`
      CREATE FUNCTION tracker_journey_facts_set_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        SELECT t.production_run_id INTO NEW.production_run_id FROM trackers t WHERE t.id = NEW.tracker_id;
        RETURN NEW;
      END $$;
      CREATE TRIGGER tracker_journey_facts_set_run BEFORE INSERT ON tracker_journey_facts
        FOR EACH ROW EXECUTE FUNCTION tracker_journey_facts_set_run();
      CREATE FUNCTION tracker_journey_facts_on_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE tracker_journey_facts SET production_run_id = NEW.production_run_id WHERE tracker_id = NEW.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER tracker_journey_facts_run_change AFTER UPDATE OF production_run_id ON trackers
        FOR EACH ROW WHEN (OLD.production_run_id IS DISTINCT FROM NEW.production_run_id)
        EXECUTE FUNCTION tracker_journey_facts_on_run_change();`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER tracker_journey_facts_run_change ON trackers;
      DROP FUNCTION tracker_journey_facts_on_run_change();
      DROP TRIGGER tracker_journey_facts_set_run ON tracker_journey_facts;
      DROP FUNCTION tracker_journey_facts_set_run();
      DROP INDEX tracker_journey_facts_run_idx;
      ALTER TABLE tracker_journey_facts DROP COLUMN production_run_id;`);
  }
}
