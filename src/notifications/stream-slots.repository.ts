import { Injectable } from '@nestjs/common';
import { Db, sql } from '../infrastructure/database/db.js';

/** Advisory lock namespace (first key) of the per-user stream slot count; the second key is the user id. */
const SLOT_LOCK_NAMESPACE = 0x5e_57_00_01;

/**
 * The slots of open notification streams (table notification_stream_slots), shared by every
 * instance: the per-user cap of concurrent streams is counted here. Taking a slot serializes on a
 * per-user transaction-scoped advisory lock, and the count runs after the lock is held (READ
 * COMMITTED: a new snapshot per statement), so concurrent opens on any instances never exceed the cap.
 */
@Injectable()
export class StreamSlotsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes slot `id` for the user when fewer than `cap` live slots are held; false when the cap is
   * reached. Slots not renewed for `staleSeconds` (an instance gone without closing) are dropped first.
   */
  take(slot: { id: string; userId: number; instanceId: string }, cap: number, staleSeconds: number): Promise<boolean> {
    return this.db.transaction(async () => {
      await this.db.execute(sql`SELECT pg_advisory_xact_lock(${SLOT_LOCK_NAMESPACE}, ${slot.userId})`);
      await this.db.execute(
        sql`DELETE FROM notification_stream_slots
             WHERE user_id = ${slot.userId} AND renewed_at < now() - make_interval(secs => ${staleSeconds})`,
      );
      const taken = await this.db.rows(
        sql`INSERT INTO notification_stream_slots (id, user_id, instance_id)
            SELECT ${slot.id}::uuid, ${slot.userId}, ${slot.instanceId}::uuid
             WHERE (SELECT count(*) FROM notification_stream_slots WHERE user_id = ${slot.userId}) < ${cap}
            RETURNING id`,
      );
      return taken.length === 1;
    });
  }

  async release(id: string): Promise<void> {
    await this.db.execute(sql`DELETE FROM notification_stream_slots WHERE id = ${id}::uuid`);
  }

  /** Marks every slot of this instance as still held. */
  async renew(instanceId: string): Promise<void> {
    await this.db.execute(
      sql`UPDATE notification_stream_slots SET renewed_at = now() WHERE instance_id = ${instanceId}::uuid`,
    );
  }

  async releaseInstance(instanceId: string): Promise<void> {
    await this.db.execute(sql`DELETE FROM notification_stream_slots WHERE instance_id = ${instanceId}::uuid`);
  }
}
