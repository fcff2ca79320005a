/** What the SQL-writing models are told about schema changes on live tables (SPEC §5.4a; the same rules lint applies). */
export const SAFE_DDL_GUIDANCE =
  'For schema changes on tables in use, prefer the forms that do not block others: CREATE INDEX CONCURRENTLY ' +
  '(alone, not with other statements), ADD CONSTRAINT … NOT VALID followed later by a separate VALIDATE CONSTRAINT, ' +
  'a CHECK (col IS NOT NULL) NOT VALID + VALIDATE before SET NOT NULL, ADD COLUMN with a constant default or none ' +
  '(never a volatile one such as random() or gen_random_uuid(), which rewrites the table), no column type changes or renames ' +
  'of columns clients use without a migration path, and no VACUUM FULL, CLUSTER or TRUNCATE … CASCADE.';
