import { type RawBuilder, sql } from 'kysely';

/**
 * A timestamptz as ISO 8601 text with `Z`, whatever the session's time zone: JSON built in SQL that is
 * hashed (a gist's source) must read the same on every connection.
 */
export function isoText(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<string | null> {
  return sql<string | null>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
