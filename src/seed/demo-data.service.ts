import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * Demo data for a fresh database (contract §9): clients, brands, runs, locations and a few hundred
 * trackers in every state with status histories. Inserted set-based in one transaction.
 */
@Injectable()
export class DemoDataService {
  private readonly logger = new Logger(DemoDataService.name);

  constructor(private readonly db: DataSource) {}

  async seed(trackersPerRun = 40): Promise<void> {
    await this.db.transaction(async (m) => {
      await m.query(`INSERT INTO clients (name) VALUES ('Acme Logistics'), ('Borealis Foods'), ('Cobalt Devices')`);
      await m.query(`
        INSERT INTO brands (name, client_id)
        SELECT b.name, c.id FROM clients c
        CROSS JOIN LATERAL (VALUES (c.name || ' Premium'), (c.name || ' Basic')) AS b(name)`);
      await m.query(`
        INSERT INTO production_runs (description, brand_id, start_date, end_date)
        SELECT b.name || ' run ' || n, b.id, now() - make_interval(days => 60 + n * 10), CASE WHEN n = 1 THEN now() - interval '20 days' END
        FROM brands b CROSS JOIN generate_series(1, 2) AS n ORDER BY b.id, n`);
      await m.query(`
        INSERT INTO storage_locations (name, address, latitude, longitude) VALUES
          ('Rotterdam Hub', 'Maasvlakte 1, Rotterdam', 51.95, 4.05),
          ('Hamburg Warehouse', 'Am Hafen 5, Hamburg', 53.54, 9.98),
          ('Chicago Depot', '200 W Lake St, Chicago', 41.88, -87.63),
          ('Singapore Cold Store', '1 Jurong Port Rd', 1.30, 103.72)`);
      await m.query(`
        INSERT INTO delivery_locations (name, address, latitude, longitude) VALUES
          ('Berlin Store', 'Alexanderplatz 1, Berlin', 52.52, 13.41),
          ('Paris Store', 'Rue de Rivoli 10, Paris', 48.86, 2.35),
          ('New York Store', '5th Ave 100, New York', 40.74, -73.99),
          ('London Store', 'Oxford St 1, London', 51.51, -0.14),
          ('Madrid Store', 'Gran Via 1, Madrid', 40.42, -3.70)`);
      // Trackers cycle through the four states; each gets a history that ends in its state.
      await m.query(
        `
        WITH dl AS (SELECT array_agg(id ORDER BY id) AS ids FROM delivery_locations),
             sl AS (SELECT array_agg(id ORDER BY id) AS ids FROM storage_locations)
        INSERT INTO trackers (name, production_run_id, status, storage_location_id, delivery_location_id, notes, created_at)
        SELECT 'TRK-' || pr.id || '-' || lpad(n::text, 4, '0'), pr.id,
               (ARRAY['CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED'])[1 + n % 4],
               CASE WHEN n % 4 = 2 THEN sl.ids[1 + n % array_length(sl.ids, 1)] END,
               dl.ids[1 + n % array_length(dl.ids, 1)],
               CASE WHEN n % 10 = 0 THEN 'demo tracker' END,
               now() - interval '40 days'
        FROM production_runs pr CROSS JOIN generate_series(1, $1::int) AS n CROSS JOIN dl CROSS JOIN sl`,
        [trackersPerRun],
      );
      await m.query(`
        INSERT INTO tracker_status_history (tracker_id, status, timestamp, storage_location_id, delivery_location_id)
        SELECT t.id, s.status, now() - interval '40 days' + s.step * interval '6 days' + (t.id % 24) * interval '1 hour',
               CASE WHEN s.status = 'IN_STORAGE' THEN coalesce(t.storage_location_id, 1 + t.id % 4) END,
               CASE WHEN s.status = 'DELIVERED' THEN t.delivery_location_id END
        FROM trackers t
        CROSS JOIN LATERAL (
          SELECT st AS status, ord AS step
          FROM unnest(ARRAY['CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED']) WITH ORDINALITY AS u(st, ord)
          WHERE ord <= array_position(ARRAY['CREATED','IN_TRANSIT','IN_STORAGE','DELIVERED'], t.status)
        ) s`);
    });
    const [{ n }] = await this.db.query<{ n: number }[]>('SELECT count(*)::int AS n FROM trackers');
    this.logger.log(`Demo data created: ${n} trackers`);
  }
}
