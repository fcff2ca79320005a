/**
 * Functions whose call makes a statement "not a read" (SPEC §5.1): they change state that a READ ONLY
 * transaction does not protect (locks, settings, other sessions, files, WAL) or run SQL the parser cannot see.
 */
import type { SqlClass } from './classification';

export interface SideEffect {
  /** The function's name as written in the SQL ("pg_catalog.nextval"). */
  name: string;
  /** What the call does, to follow "calls f(), which …". */
  why: string;
  class: SqlClass;
}

type Entry = readonly [SqlClass, string];

const SEQUENCE: Entry = ['write', 'changes a sequence'];
const XID: Entry = ['write', 'assigns a transaction id (consumes an XID)'];
const SERVER_FILE_READ: Entry = ['admin', "reads the server's file system"];
const SERVER_FILE_WRITE: Entry = ['admin', "writes to the server's file system"];
const SIGNAL: Entry = ['admin', 'signals another server process'];
const WAL: Entry = ['admin', 'controls WAL, backups or recovery of the server'];
const REPLICATION: Entry = ['admin', 'changes replication state of the server'];
const INDEX_MAINTENANCE: Entry = ['admin', 'maintains an index outside normal writes'];
const STATS_RESET: Entry = ['admin', 'resets server statistics'];
const PLANNER_STATS: Entry = ['admin', 'changes planner statistics'];
const RUNS_SQL_TEXT: Entry = ['unknown', 'runs SQL given as a string, which the parser cannot see'];
const OTHER_CONNECTION: Entry = ['unknown', 'works over another connection, outside this transaction'];
const LARGE_OBJECT_WRITE: Entry = ['write', 'changes a large object'];
const LARGE_OBJECT_DESCRIPTOR: Entry = ['session', 'uses a large-object descriptor of this session'];
const LARGE_OBJECT_READ: Entry = ['read', 'reads a large object (the large-object API is held for approval)'];

/** Exact names, lower case; "schema.name" keys match only that schema (extension functions). */
const EXACT = new Map<string, Entry>([
  ['nextval', SEQUENCE],
  ['setval', SEQUENCE],
  ['txid_current', XID],
  ['pg_current_xact_id', XID],
  ['set_config', ['session', 'changes a setting']],
  ['setseed', ['session', 'changes the random seed of this session']],
  ['pg_notify', ['session', 'sends a notification to listening sessions']],
  ['pg_export_snapshot', ['session', 'exports a snapshot to other sessions']],
  ['pg_terminate_backend', SIGNAL],
  ['pg_cancel_backend', SIGNAL],
  ['pg_log_backend_memory_contexts', SIGNAL],
  ['pg_reload_conf', ['admin', "reloads the server's configuration"]],
  ['pg_rotate_logfile', ['admin', "rotates the server's log file"]],
  ['pg_rotate_logfile_old', ['admin', "rotates the server's log file"]],
  ['pg_logfile_rotate', ['admin', "rotates the server's log file"]],
  ['pg_switch_wal', WAL],
  ['pg_switch_xlog', WAL],
  ['pg_create_restore_point', WAL],
  ['pg_backup_start', WAL],
  ['pg_backup_stop', WAL],
  ['pg_start_backup', WAL],
  ['pg_stop_backup', WAL],
  ['pg_promote', WAL],
  ['pg_wal_replay_pause', WAL],
  ['pg_wal_replay_resume', WAL],
  ['pg_xlog_replay_pause', WAL],
  ['pg_xlog_replay_resume', WAL],
  ['pg_log_standby_snapshot', WAL],
  ['pg_logical_emit_message', WAL],
  ['pg_replication_slot_advance', REPLICATION],
  ['pg_drop_replication_slot', REPLICATION],
  ['pg_sync_replication_slots', REPLICATION],
  ['pg_import_system_collations', ['ddl', 'creates collations']],
  ['pg_extension_config_dump', ['ddl', "changes an extension's dump configuration"]],
  ['pg_nextoid', ['admin', 'assigns an object id']],
  ['gin_clean_pending_list', INDEX_MAINTENANCE],
  ['brin_summarize_new_values', INDEX_MAINTENANCE],
  ['brin_summarize_range', INDEX_MAINTENANCE],
  ['brin_desummarize_range', INDEX_MAINTENANCE],
  ['pg_prewarm', ['admin', 'loads a relation into the buffer cache']],
  ['autoprewarm_start_worker', ['admin', 'starts a background worker']],
  ['autoprewarm_dump_now', SERVER_FILE_WRITE],
  ['pg_truncate_visibility_map', ['admin', 'truncates a visibility map']],
  ['pg_stat_statements_reset', STATS_RESET],
  ['pg_restore_relation_stats', PLANNER_STATS],
  ['pg_clear_relation_stats', PLANNER_STATS],
  ['pg_restore_attribute_stats', PLANNER_STATS],
  ['pg_clear_attribute_stats', PLANNER_STATS],
  ['pg_stat_file', SERVER_FILE_READ],
  // Behind the catalog views pg_hba_file_rules, pg_ident_file_mappings and pg_file_settings: the server's
  // auth and configuration files (the reach engine also flags the views, reachWalk.ts).
  ['pg_hba_file_rules', SERVER_FILE_READ],
  ['pg_ident_file_mappings', SERVER_FILE_READ],
  ['pg_show_all_file_settings', SERVER_FILE_READ],
  ['pg_logdir_ls', SERVER_FILE_READ],
  ['lo_import', ['admin', 'reads a file on the server into a large object']],
  ['lo_export', ['admin', 'writes a large object to a file on the server']],
  ['lo_unlink', ['write', 'deletes a large object']],
  ['lo_create', ['write', 'creates a large object']],
  ['lo_creat', ['write', 'creates a large object']],
  ['lo_from_bytea', ['write', 'creates a large object']],
  ['lo_put', LARGE_OBJECT_WRITE],
  ['lowrite', LARGE_OBJECT_WRITE],
  ['lo_truncate', LARGE_OBJECT_WRITE],
  ['lo_truncate64', LARGE_OBJECT_WRITE],
  ['lo_open', LARGE_OBJECT_DESCRIPTOR],
  ['lo_close', LARGE_OBJECT_DESCRIPTOR],
  ['lo_lseek', LARGE_OBJECT_DESCRIPTOR],
  ['lo_lseek64', LARGE_OBJECT_DESCRIPTOR],
  ['lo_tell', LARGE_OBJECT_DESCRIPTOR],
  ['lo_tell64', LARGE_OBJECT_DESCRIPTOR],
  ['loread', LARGE_OBJECT_READ],
  ['lo_get', LARGE_OBJECT_READ],
  ['query_to_xml', RUNS_SQL_TEXT],
  ['query_to_xml_and_xmlschema', RUNS_SQL_TEXT],
  ['query_to_xmlschema', RUNS_SQL_TEXT],
  ['cursor_to_xml', RUNS_SQL_TEXT],
  ['cursor_to_xmlschema', RUNS_SQL_TEXT],
  ['ts_stat', RUNS_SQL_TEXT],
  ['ts_rewrite', RUNS_SQL_TEXT],
  ['crosstab', RUNS_SQL_TEXT],
  ['crosstab2', RUNS_SQL_TEXT],
  ['crosstab3', RUNS_SQL_TEXT],
  ['crosstab4', RUNS_SQL_TEXT],
  ['connectby', RUNS_SQL_TEXT],
  ['xpath_table', RUNS_SQL_TEXT],
  ['pg_background_launch', RUNS_SQL_TEXT],
  ['postgres_fdw_disconnect', OTHER_CONNECTION],
  ['postgres_fdw_disconnect_all', OTHER_CONNECTION],
  ['cron.schedule', ['admin', 'schedules a job (pg_cron)']],
  ['cron.schedule_in_database', ['admin', 'schedules a job (pg_cron)']],
  ['cron.unschedule', ['admin', 'removes a scheduled job (pg_cron)']],
  ['cron.alter_job', ['admin', 'changes a scheduled job (pg_cron)']],
]);

/**
 * Families matched by prefix, checked in order after the exact names. Broad on purpose: a false alarm
 * costs one approval, a miss lets a side effect run as a read.
 */
const PREFIXES: readonly (readonly [string, SqlClass, string])[] = [
  ['pg_advisory_unlock', 'session', 'releases advisory locks'],
  ['pg_advisory_', 'session', 'takes an advisory lock'],
  ['pg_try_advisory_', 'session', 'takes an advisory lock'],
  ['pg_stat_reset', ...STATS_RESET],
  ['pg_read_', ...SERVER_FILE_READ],
  ['pg_ls_', ...SERVER_FILE_READ],
  ['pg_file_', ...SERVER_FILE_WRITE],
  ['pg_create_', ...REPLICATION],
  ['pg_copy_', ...REPLICATION],
  ['pg_logical_slot_', ...REPLICATION],
  ['pg_replication_origin_', ...REPLICATION],
  ['binary_upgrade_', 'admin', 'changes catalogs the way pg_upgrade does'],
  ['dblink', ...OTHER_CONNECTION],
  ['pgr_', ...RUNS_SQL_TEXT],
  ['lo_', 'write', 'uses the large-object API'],
];

/**
 * The side effect of calling the function named by `name` (its qualified name parts, as in FuncCall.funcname),
 * or undefined for functions treated as reads. Case-insensitive; any schema matches a bare entry, because
 * extension functions (dblink, pg_prewarm, …) live wherever the extension was installed.
 */
export function sideEffectOf(name: string[]): SideEffect | undefined {
  const parts = name.map((part) => part.toLowerCase());
  const fn = parts[parts.length - 1];
  if (fn === undefined || fn === '') return undefined;
  const schema = parts.length > 1 ? parts[parts.length - 2] : undefined;
  const written = name.join('.');
  const exact = (schema === undefined ? undefined : EXACT.get(`${schema}.${fn}`)) ?? EXACT.get(fn);
  if (exact) return { name: written, class: exact[0], why: exact[1] };
  for (const [prefix, cls, why] of PREFIXES) {
    if (fn.startsWith(prefix)) return { name: written, class: cls, why };
  }
  return undefined;
}
