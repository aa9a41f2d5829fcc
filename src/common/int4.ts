/** Largest PostgreSQL `integer`: every id column of the schema is int4 (serial). */
export const MAX_INT4 = 2_147_483_647;
